package sandbox

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker quirks of older kaas generations, switched on by tests and the
// control commands so tools can be tried against them.
//
// ZeroTimestampOffsets: the Go generation of kaas answers ListOffsets by
// timestamp with offset 0 for every timestamp (lab-observed), so a client
// that trusts the answer rewinds to the start of the log. With the quirk
// on, every broker answers that way; earliest (-2), latest (-1) and
// max-timestamp (-3) lookups stay correct.

// BreakCoordination makes one broker accept connections and answer
// everything (metadata, ListGroups, FindCoordinator, DescribeGroups,
// OffsetFetch) except OffsetCommit, which it answers with
// COORDINATOR_NOT_AVAILABLE on every partition: a broker whose coordinator
// is wedged (a stuck offsets store, a full or read-only volume) while its
// listener is fine. No lag metric shows it until its groups fall behind;
// 'kaasctl probe' does.
func (s *Sandbox) BreakCoordination(id string, on bool) error {
	if _, err := s.lookup(id); err != nil {
		return err
	}
	if on {
		s.brokenCoord.Store(id, true)
	} else {
		s.brokenCoord.Delete(id)
	}
	return nil
}

func (s *Sandbox) coordinationBroken(b *broker) bool {
	_, ok := s.brokenCoord.Load(b.id)
	return ok
}

// brokenCommitAnswer is a wedged coordinator's OffsetCommit answer.
func brokenCommitAnswer(f *frame, req *kmsg.OffsetCommitRequest) *item {
	resp := kmsg.NewPtrOffsetCommitResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.CoordinatorNotAvailable.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return local(f, resp)
}

// EmulateZeroTimestampOffsets switches the quirk on or off (off by default).
func (s *Sandbox) EmulateZeroTimestampOffsets(on bool) { s.zeroTimeOffsets.Store(on) }

// EmulateNoTimestampOffsets: kaas's Rust broker (0.2.18, seen on a real
// cluster) answers ListOffsets by timestamp with offset -1 and timestamp -1
// for every partition, which clients read as "no record at or after that
// time" (the log end). Off by default; it and the Go answer exclude each
// other.
func (s *Sandbox) EmulateNoTimestampOffsets(on bool) {
	s.noTimeOffsets.Store(on)
	if on {
		s.zeroTimeOffsets.Store(false)
	}
}

// EmptyOffsetFetchAll: kaas answers only the partitions an OffsetFetch
// names; a fetch of every committed offset (null topics) gets no topics at
// all, where Kafka (and kfake) list them (seen on a real Go broker; kaas's
// coordinator iterates the request's topics). kadm's FetchOffsets and
// FetchOffsetsForTopics rely on the Kafka answer, so this is off by default
// for the tests that check commits with them; a test of what kaasctl does
// on kaas switches it on.

// EmulateEmptyOffsetFetchAll switches the quirk on or off (off by default).
func (s *Sandbox) EmulateEmptyOffsetFetchAll(on bool) { s.emptyFetchAll.Store(on) }

// SetQuirk switches a quirk by its control-command name.
func (s *Sandbox) SetQuirk(name string, on bool) (string, error) {
	switch name {
	case "zero-timestamp-offsets":
		s.EmulateZeroTimestampOffsets(on)
		if on {
			s.noTimeOffsets.Store(false)
		}
		return "ListOffsets by timestamp answers offset 0 (kaas's Go flavour)", nil
	case "no-timestamp-offsets":
		s.EmulateNoTimestampOffsets(on)
		return "ListOffsets by timestamp answers offset -1, timestamp -1 (kaas's Rust broker)", nil
	case "empty-offsetfetch-all":
		s.EmulateEmptyOffsetFetchAll(on)
		return "OffsetFetch with null topics answers none", nil
	case "kaas-manifests":
		s.EmulateKaasManifests(on)
		return "segment files in kaas's format, manifests only on open, takeover and close", nil
	}
	return "", fmt.Errorf("unknown quirk %q (zero-timestamp-offsets, no-timestamp-offsets, empty-offsetfetch-all, kaas-manifests)", name)
}

// timestampAnswer rewrites a ListOffsets answer as kaas gives it: offset
// off (0 on the Go flavour, -1 on the Rust broker) and timestamp -1 for
// every partition the request looked up by timestamp.
func timestampAnswer(f *frame, raw []byte, off int64) []byte {
	req, err := f.decode()
	if err != nil {
		return withSize(raw)
	}
	byTime := map[string]map[int32]bool{}
	for _, t := range req.(*kmsg.ListOffsetsRequest).Topics {
		for _, p := range t.Partitions {
			if p.Timestamp >= 0 {
				if byTime[t.Topic] == nil {
					byTime[t.Topic] = map[int32]bool{}
				}
				byTime[t.Topic][p.Partition] = true
			}
		}
	}
	if len(byTime) == 0 {
		return withSize(raw)
	}
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.ListOffsetsResponse)
	for i := range r.Topics {
		t := &r.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if byTime[t.Topic][p.Partition] && p.ErrorCode == 0 {
				p.Offset, p.Timestamp = off, -1
			}
		}
	}
	return rawResponse(f, r)
}
