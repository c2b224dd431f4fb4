package inspect

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/render"
)

// VerdictBlocker is what holds a lagging partition back, as the read
// model's blocker step names it (PartitionBlocker, what groups describe
// --why prints), in the few fields a verdict carries.
type VerdictBlocker struct {
	Partition string `json:"partition"`
	// Offset is the committed offset the consumer is held at; Lag the
	// partition's lag behind the log end.
	Offset int64 `json:"offset"`
	Lag    int64 `json:"lag"`
	// Kind is the blocker (inspect.BlockerKinds), Detail its evidence.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Transaction is the transactional id (or "producer N") a
	// transaction blocker waits behind ("" none).
	Transaction string `json:"transaction,omitempty"`
	// Since is when the committed offset stopped moving.
	Since time.Time `json:"since,omitzero"`
	// Fix is what to do; Command its command as a dry run (a reset plans,
	// --execute writes), "" when the fix is no kaasctl command.
	Fix     string `json:"fix"`
	Command string `json:"command"`
	// Assumes names the kaas generation the blocker's rules assumed.
	Assumes string `json:"assumes"`
}

// VerdictBlockerOf is b as a verdict carries it.
func VerdictBlockerOf(b *PartitionBlocker) VerdictBlocker {
	v := VerdictBlocker{Partition: b.Topic + "/" + strconv.Itoa(int(b.Partition)), Offset: b.Committed, Lag: b.Lag, Kind: b.Kind,
		Detail: b.Detail, Fix: b.Fix, Command: dryRun(b.FixCommand), Assumes: b.Assumes}
	if t := b.Txn; t != nil {
		v.Transaction = t.TransactionalID
		if v.Transaction == "" {
			v.Transaction = "producer " + strconv.FormatInt(t.ProducerID, 10)
		}
	}
	if b.Stuck != nil {
		v.Since = b.Stuck.Since
	}
	return v
}

// dryRun is a fix command without --execute: the verdict offers a write
// as its plan.
func dryRun(cmd string) string {
	return strings.Replace(cmd, " --execute", "", 1)
}

// blockerFindings: the blockers of the group's lagging partitions (but
// noConsumer: a group without members is the STOP condition's); the most
// lagging one is the verdict's blocker and its finding (on the
// partition BLOCKED names, that condition's command becomes the fix).
func blockerFindings(v *Verdict, in ExplainInput, add func(string, ExplainFinding)) {
	var bs []PartitionBlocker
	for _, b := range in.Blockers {
		if Blocking(b.Kind) && b.Kind != BlockNoConsumer { // no consumer is STOP's, as health has it
			bs = append(bs, b)
		}
	}
	if len(bs) == 0 {
		return
	}
	slices.SortStableFunc(bs, func(a, b PartitionBlocker) int { return cmp.Compare(b.Lag, a.Lag) })
	vb := VerdictBlockerOf(&bs[0])
	v.Blocker, v.BlockedPartitions = &vb, len(bs)
	detail := vb.Kind + ": " + vb.Detail
	if len(bs) > 1 {
		detail += " (and " + render.Plural(len(bs)-1, "more blocked partition", "more blocked partitions") + ")"
	}
	add(FindingBlocker, ExplainFinding{Code: vb.Kind, Partition: vb.Partition, Detail: detail, Since: vb.Since})
	f := &v.Findings[len(v.Findings)-1]
	if vb.Command != "" {
		f.Command, f.Why = vb.Command, blockerWhy(vb)
	}
}

// blockerWhy says what the blocker's command does.
func blockerWhy(b VerdictBlocker) string {
	why := b.Fix
	if strings.Contains(b.Command, "kaasctl offsets reset") {
		why += " (this plans the reset, a dry run: add --execute with the group's consumers stopped)"
	}
	return why
}
