package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// ServedBehindLog compares the log end a broker served with the log end
// the partition's segments gave when they were read before the broker was
// asked. A healthy leader serves at least that much (kaas advances its high
// watermark as soon as a batch is in the segment file), so a lower answer
// is a stale high watermark: the Go flavour takes a partition over without
// re-scanning its segments when the epoch in manifest.json is already the
// assignment's, and then serves the manifest's value, which trails the log
// (a full restart after a broker's shutdown flush wrote a stale manifest
// does it). It returns "" when the served end is not behind, or when the
// segments could not be read (only the segments are evidence here: a
// manifest trails the log by design).
func ServedBehindLog(served int64, b *volume.LogBounds, gen volume.GenerationInfo) string {
	held, ok := HeldEnd(b)
	if !ok || served >= held {
		return ""
	}
	man := ""
	if b.Manifest != nil {
		man = fmt.Sprintf(", manifest.json says %d at epoch %d", b.Manifest.HighWatermark, b.Manifest.Epoch)
	}
	return fmt.Sprintf("the broker serves log end %d but the partition's segments %s (read before asking%s): its leader serves a stale high watermark, %d records short, and consumers cannot fetch past it; %s (%s); %s",
		served, heldWords(b, held), man, held-served,
		gen.BrokerFact(func(f volume.BrokerFacts) string { return f.ServedBehindCause }), gen.Assumes(),
		gen.BrokerFact(func(f volume.BrokerFacts) string { return f.ServedBehindFix }))
}

// heldWords says how far the segments reach: their end, or, when the
// leader appended at a stale end over records already there, the end of
// the earlier copy.
func heldWords(b *volume.LogBounds, held int64) string {
	if ov := writtenTwice(b); ov != nil && held > b.End.Value {
		return fmt.Sprintf("held records up to offset %d before the leader appended at its stale end (%s; the last batch now ends at %d)", held, ov.Describe(), b.End.Value)
	}
	return fmt.Sprintf("end at %d", held)
}

// HeldEnd is how far the partition's segments reach, read before the
// broker was asked: the last batch's end, or the end of the earlier copy
// of an offset range written twice when that is further (a leader that
// took the partition over at a stale end appended there, so the last batch
// no longer shows what the segments held and consumers had read). ok is
// false when the segments could not be read (only the segments are
// evidence: a manifest trails the log by design).
func HeldEnd(b *volume.LogBounds) (end int64, ok bool) {
	if b == nil || b.End == nil || b.End.Source != volume.SourceSegments {
		return 0, false
	}
	end = b.End.Value
	if ov := writtenTwice(b); ov != nil {
		end = max(end, ov.To+1)
	}
	return end, true
}

// servedBehind: the segments, read before the broker was asked, reach past
// what it served (HeldEnd).
func servedBehind(served int64, b *volume.LogBounds) bool {
	held, ok := HeldEnd(b)
	return ok && served < held
}

// DocServedBehindLog is the doctor finding for partitions a broker serves
// below the log end of their segments.
const DocServedBehindLog = "live.servedBehindLog"

// ServedEnd is one partition's served log end beside its segments'
// bounds (read before the broker was asked).
type ServedEnd struct {
	Topic     string
	Partition int32
	Served    int64
	Log       *volume.LogBounds
}

// LogPartitions are the partitions of logs, to ask their leaders for the
// log end they serve.
func LogPartitions(logs []volume.LogBounds) wire.TopicPartitions {
	want := wire.TopicPartitions{}
	for _, b := range logs {
		want.Add(b.Topic, b.Partition)
	}
	return want
}

// PairServedEnds pairs each partition of logs (read before the brokers
// were asked) with the log end its leader served, leaving out those it
// did not answer for.
func PairServedEnds(logs []volume.LogBounds, served map[string]map[int32]wire.LogOffsets) []ServedEnd {
	ends := make([]ServedEnd, 0, len(logs))
	for i := range logs {
		b := &logs[i]
		if lo, ok := served[b.Topic][b.Partition]; ok && lo.Err == "" {
			ends = append(ends, ServedEnd{Topic: b.Topic, Partition: b.Partition, Served: lo.End, Log: b})
		}
	}
	return ends
}

// ServedBehind is one partition served behind its log.
type ServedBehind struct {
	Partition string `json:"partition"`
	Served    int64  `json:"served"`
	LogEnd    int64  `json:"logEnd"`
	// Leader and Epoch are the assignment's (Leader "" when it names none).
	Leader string `json:"leader"`
	Epoch  uint32 `json:"epoch"`
	// ManifestEpoch and ManifestHWM are the partition's manifest.json
	// (-1 when it was not read).
	ManifestEpoch int64 `json:"manifestEpoch"`
	ManifestHWM   int64 `json:"manifestHighWatermark"`
	// Since is when a long-running observer first saw it (zero: now); it
	// stays reported until its cause is gone (observe's tracker).
	Since time.Time `json:"since,omitzero"`
}

// FindServedBehind keeps the partitions served below their segments' log
// end (ServedBehindLog), sorted by topic then partition, with the
// assignment's leader and epoch when a is given.
func FindServedBehind(ends []ServedEnd, a *volume.Assignment) []ServedBehind {
	type tp struct {
		t string
		p int32
	}
	leaders := map[tp]volume.PartitionEntry{}
	if a != nil {
		for _, e := range a.Partitions {
			leaders[tp{e.Topic, e.Partition}] = e
		}
	}
	var out []ServedBehind
	for _, e := range ends {
		if !servedBehind(e.Served, e.Log) {
			continue
		}
		held, _ := HeldEnd(e.Log)
		sb := ServedBehind{Partition: e.Topic + "/" + strconv.Itoa(int(e.Partition)), Served: e.Served, LogEnd: held, ManifestEpoch: -1, ManifestHWM: -1}
		if m := e.Log.Manifest; m != nil {
			sb.ManifestEpoch, sb.ManifestHWM = m.Epoch, m.HighWatermark
		}
		if l, ok := leaders[tp{e.Topic, e.Partition}]; ok {
			sb.Leader, sb.Epoch = l.Broker, l.Epoch
		}
		out = append(out, sb)
	}
	slices.SortFunc(out, func(x, y ServedBehind) int { return CompareOffsetKeys(x.Partition, y.Partition) })
	return out
}

// AddServedBehindLog reports the partitions served behind their log: an
// error, since consumers cannot fetch past the served end and every reset
// of them is refused.
func (r *DoctorReport) AddServedBehindLog(behind []ServedBehind, gi volume.GenerationInfo, volumeFlags, brokerFlags string) {
	if len(behind) == 0 {
		return
	}
	subjects := make([]string, len(behind))
	leaders := []string{}
	for i, b := range behind {
		subjects[i] = b.Partition
		if b.Leader != "" && !slices.Contains(leaders, b.Leader) {
			leaders = append(leaders, b.Leader)
		}
	}
	f := behind[0]
	at := ""
	if f.Leader != "" {
		at = fmt.Sprintf(", led by %s at epoch %d", f.Leader, f.Epoch)
	}
	man := ""
	if f.ManifestEpoch >= 0 {
		man = fmt.Sprintf("; its manifest.json says %d at epoch %d", f.ManifestHWM, f.ManifestEpoch)
	}
	// What fixes it depends on the generation (the volume model's row):
	// on the Go flavour a takeover at a new epoch re-scans the segments;
	// on Rust the stale end survives takeovers.
	fix := gi.BrokerFact(func(b volume.BrokerFacts) string { return b.ServedBehindFix })
	const restartEach = "restart the leader of each partition listed, "
	if len(leaders) > 0 && strings.HasPrefix(fix, restartEach) {
		fix = "restart " + strings.Join(leaders, ", ") + " (the leaders in assignment.json), " + strings.TrimPrefix(fix, restartEach)
	}
	fix += "; do not reset these partitions' offsets until they serve their log end (kaasctl refuses to) [" + gi.Assumes() + "]"
	r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckLive, Code: DocServedBehindLog, Subjects: subjects, BlastRadius: len(behind),
		Message: fmt.Sprintf("%d %s served below the log end of %s segments (first: %s served at %d, its segments end at %d%s%s): consumers cannot fetch past what is served and lag reads low; %s (%s)",
			len(behind), pluralWord(len(behind), "partition is", "partitions are"), pluralWord(len(behind), "its", "their"), f.Partition, f.Served, f.LogEnd, at, man,
			gi.BrokerFact(func(b volume.BrokerFacts) string { return b.ServedBehindCause }), gi.Assumes()),
		Fix:      fix,
		Commands: []string{"kaasctl volume check" + volumeFlags, "kaasctl doctor" + volumeFlags + brokerFlags}})
}

// ServedBehindWarning is the warning of groups describe for the
// partitions its brokers serve below the log end their segments gave
// before the brokers were asked (LivePartition.ServedBehindLog), "" when
// none: each partition counted once, the first named with both ends and
// its group.
func ServedBehindWarning(groups []LiveDescription, gi volume.GenerationInfo) string {
	var behind []ServedBehind
	first := ""
	for _, d := range groups {
		for _, p := range d.Partitions {
			if !p.ServedBehindLog {
				continue
			}
			k := p.Topic + "/" + strconv.Itoa(int(p.Partition))
			if slices.ContainsFunc(behind, func(b ServedBehind) bool { return b.Partition == k }) {
				continue
			}
			if first == "" {
				first = " (group " + volume.DisplayName(d.Group) + ")"
			}
			behind = append(behind, ServedBehind{Partition: k, Served: p.LogEnd, LogEnd: *p.SegmentsLogEnd})
		}
	}
	return ServedBehindMessage(behind, first, gi, "servedBehindLog in -o json")
}

// ServedBehindMessage words partitions served below their segments' log
// end for a warning or a log line ("" when none): how many, the first with
// both ends (its leader when known, then extra), what it means, the
// generation whose takeover rule it assumes, and ref (where the figures
// are).
func ServedBehindMessage(behind []ServedBehind, extra string, gi volume.GenerationInfo, ref string) string {
	if len(behind) == 0 {
		return ""
	}
	f := behind[0]
	led := ""
	if f.Leader != "" {
		led = fmt.Sprintf(", led by %s at epoch %d", f.Leader, f.Epoch)
	}
	return fmt.Sprintf("%d %s served below the log end of %s segments, read before the brokers were asked (first: %s served at %d, its segments end at %d%s%s): a stale high watermark, so consumers cannot fetch past it and the lag shown reads low (%s); a broker that takes a partition over at the epoch its manifest already holds keeps the manifest's value instead of re-scanning the segments (%s); 'kaasctl doctor' names the leaders to restart",
		len(behind), pluralWord(len(behind), "partition is", "partitions are"), pluralWord(len(behind), "its", "their"), f.Partition, f.Served, f.LogEnd, led, extra, ref, gi.Assumes())
}
