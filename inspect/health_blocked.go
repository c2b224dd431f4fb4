package inspect

import (
	"strconv"
	"time"
)

// SampleBlocker is one partition's blocker at an observation (what
// BLOCKED reports): the read model's PartitionBlocker in a line.
type SampleBlocker struct {
	// Key is "topic/partition".
	Key       string    `json:"partition"`
	Committed int64     `json:"committed"`
	Kind      string    `json:"kind"`
	Detail    string    `json:"detail"`
	Since     time.Time `json:"since"`
	// Fix is the blocker's fix, FixCommand its command.
	Fix        string `json:"fix,omitempty"`
	FixCommand string `json:"fixCommand,omitempty"`
}

// SampleBlockerOf is b as a health sample carries it, blocked since.
func SampleBlockerOf(b *PartitionBlocker, since time.Time) SampleBlocker {
	return SampleBlocker{Key: b.Topic + "/" + strconv.Itoa(int(b.Partition)), Committed: b.Committed, Kind: b.Kind, Detail: b.Detail, Since: since, Fix: b.Fix, FixCommand: b.FixCommand}
}

// blockedEvidence is BLOCKED: every blocker the last observation holds
// (the read model names one only for a partition whose committed offset
// stayed since the observation before, so a consumer moving on clears it).
func blockedEvidence(last HealthSample, add func(HealthEvidence)) {
	for _, b := range last.Blockers {
		if !Blocking(b.Kind) || b.Kind == BlockNoConsumer {
			continue // no consumer is STOP's
		}
		add(HealthEvidence{State: HealthBlocked, Partition: b.Key, Before: b.Committed, After: b.Committed, Since: b.Since, Time: last.Time,
			Detail: b.Kind + ": " + b.Detail})
	}
}
