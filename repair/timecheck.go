package repair

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A broker's ListOffsets answer for a timestamp is trusted only when the
// records agree: the record at the answered offset is at or after the
// time, and the one before it is earlier. The Go generation of kaas
// answers offset 0 for every timestamp, so a --to-datetime or --by-duration
// reset trusted as-is rewinds a group to the start of its log.

// timeCheckRange is the records that prove or disprove one answer.
func timeCheckRange(off int64, lo wire.LogOffsets) (from, to int64) {
	from, to = max(off-1, lo.Start), min(off+1, lo.End)
	return from, to
}

// CheckTimeAnswer returns the evidence when the answered offset for time t
// contradicts the records read around it ("" when it holds). stamps are
// the records of [off-1, off+1) within the log; ok is false when they
// could not be read, and then nothing can be said.
func CheckTimeAnswer(t time.Time, off int64, lo wire.LogOffsets, stamps []wire.RecordStamp) (evidence string, ok bool) {
	from, to := timeCheckRange(off, lo)
	if from >= to {
		return "", true // an empty log: any answer is its end
	}
	var at, before *wire.RecordStamp
	for i := range stamps {
		s := &stamps[i]
		if s.Offset >= off && at == nil {
			at = s
		}
		if s.Offset < off {
			before = s
		}
	}
	if (off < lo.End && at == nil) || (off > lo.Start && before == nil) {
		return "", false
	}
	ts := func(x time.Time) string { return x.UTC().Format(time.RFC3339Nano) }
	if at != nil && off < lo.End && at.Timestamp.Before(t) {
		return fmt.Sprintf("the brokers answered offset %d for %s, but the record at offset %d is from %s, earlier than that", off, ts(t), at.Offset, ts(at.Timestamp)), true
	}
	if before != nil && !before.Timestamp.Before(t) {
		return fmt.Sprintf("the brokers answered offset %d for %s, but the record before it, at offset %d, is from %s, not earlier than that", off, ts(t), before.Offset, ts(before.Timestamp)), true
	}
	return "", true
}

// checkTimeAnswers reads the records around every answered offset (one
// bounded fetch per partition) and returns, per partition, the evidence
// against the answer, or a note that it could not be checked.
func checkTimeAnswers(ctx context.Context, cl *wire.Client, t time.Time, timed kadm.ListedOffsets, logs map[string]map[int32]wire.LogOffsets) (bad, unchecked map[tpKey]string) {
	bad, unchecked = map[tpKey]string{}, map[tpKey]string{}
	var ranges []wire.StampRange
	timed.Each(func(lo kadm.ListedOffset) {
		l, ok := logs[lo.Topic][lo.Partition]
		if lo.Err != nil || !ok || l.Err != "" {
			return
		}
		from, to := timeCheckRange(lo.Offset, l)
		if from < to {
			ranges = append(ranges, wire.StampRange{Topic: lo.Topic, Partition: lo.Partition, From: from, To: to})
		}
	})
	if len(ranges) == 0 {
		return bad, unchecked
	}
	stamps, err := cl.RecordStamps(ctx, ranges)
	for _, r := range ranges {
		k := tpKey{r.Topic, r.Partition}
		lo, _ := timed.Lookup(r.Topic, r.Partition)
		l := logs[r.Topic][r.Partition]
		ev, ok := "", false
		why := "they did not arrive in time"
		if err != nil {
			why = err.Error()
		} else {
			ev, ok = CheckTimeAnswer(t, lo.Offset, l, stamps[r.Topic][r.Partition])
		}
		switch {
		case !ok && lo.Offset == l.Start && l.End > l.Start:
			// Unverified, and exactly what the Go generation answers
			// for every time: a silent rewind to the start of the log.
			bad[k] = fmt.Sprintf("the brokers answered the log start (%d) for %s, which is what kaas's Go flavour answers for every time, and the records to check it could not be read (%s)", lo.Offset, t.UTC().Format(time.RFC3339Nano), why)
		case !ok:
			unchecked[k] = "the brokers' offset for that time was not checked against the records: " + why
		case ev != "":
			bad[k] = ev
		}
	}
	return bad, unchecked
}

// timeRefusal is the group's error when some of its partitions' answers
// contradict the records: it says what the volume's generation answers for
// a time (the volume model's row; each candidate's when undetermined).
func timeRefusal(parts []string, gi volume.GenerationInfo) string {
	slices.Sort(parts)
	answer := gi.BrokerFact(func(b volume.BrokerFacts) string { return b.TimeLookup })
	return fmt.Sprintf("refused: the brokers' offsets for that time contradict the records on %s (see the rows). kaas answers ListOffsets by timestamp with %s (%s). Look the offsets up another way (e.g. 'kaasctl offsets reset --to-offset', or a --from-file plan)", strings.Join(parts, ", "), answer, gi.Assumes())
}
