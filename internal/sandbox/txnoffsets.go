package sandbox

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnOffsets holds transactional offset commits until their transaction
// ends, like kaas's pending layer: EndTxn(commit) writes them to the group
// files, an abort drops them.
type txnOffsets struct {
	mu      sync.Mutex
	pending map[int64]map[string][]committed // producer id → group → offsets
}

func (s *Sandbox) afterTxnOffsetCommit(b *broker, f *frame, req *kmsg.TxnOffsetCommitRequest, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.TxnOffsetCommitResponse)
	ok := map[string]bool{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				ok[tpKey(t.Topic, p.Partition)] = true
			}
		}
	}
	var cs []committed
	for _, t := range req.Topics {
		if t.Topic == "" {
			b.log.log("WARN", targetSandbox, "sandbox: TxnOffsetCommit by topic id is not mirrored to the offsets file", kv{"group", req.Group})
			continue
		}
		for _, p := range t.Partitions {
			if k := tpKey(t.Topic, p.Partition); ok[k] {
				cs = append(cs, committed{key: k, offset: p.Offset, meta: p.Metadata})
			}
		}
	}
	if len(cs) > 0 {
		s.txn.mu.Lock()
		if s.txn.pending == nil {
			s.txn.pending = map[int64]map[string][]committed{}
		}
		if s.txn.pending[req.ProducerID] == nil {
			s.txn.pending[req.ProducerID] = map[string][]committed{}
		}
		s.txn.pending[req.ProducerID][req.Group] = append(s.txn.pending[req.ProducerID][req.Group], cs...)
		s.txn.mu.Unlock()
	}
	return withSize(raw)
}

func (s *Sandbox) afterEndTxn(b *broker, f *frame, req *kmsg.EndTxnRequest, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	if resp.(*kmsg.EndTxnResponse).ErrorCode != 0 {
		return withSize(raw)
	}
	s.txn.mu.Lock()
	groups := s.txn.pending[req.ProducerID]
	delete(s.txn.pending, req.ProducerID)
	s.txn.mu.Unlock()
	if !req.Commit {
		return withSize(raw)
	}
	for g, cs := range groups {
		if err := s.offsets.commit(g, cs); err != nil {
			b.log.log("WARN", targetSandbox, "sandbox: offsets file not written", kv{"group", g}, kv{"err", err.Error()})
		}
	}
	return withSize(raw)
}
