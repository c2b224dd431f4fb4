package inspect

import (
	"fmt"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/wire"
)

// groups describe's skew and ownership: the lag spread over a live group's
// partitions (and, with a drain window, its hot partitions) and who owns
// its partitions, from the read model's partition states and the
// DescribeGroups answer.

// addSkew gives d its lag spread (with lag on at least two partitions)
// and its ownership (with members).
func (d *LiveDescription) addSkew(w wire.DescribedGroup, gs *GroupState) {
	if gs == nil {
		return
	}
	if s := LagSpreadOf(gs.Partitions); s.Partitions >= 2 && s.Total > 0 {
		d.Spread = &s
	}
	if w.Err == "" && len(w.Members) > 0 {
		d.Ownership = OwnershipOf(MemberSampleOf(w, "", time.Time{}).Members, gs.Partitions)
	}
}

// AddRates adds the hot partitions a drain window's produce rates show
// to the group's lag spread (none without a spread or an estimate).
func (d *LiveDescription) AddRates(f *GroupForecast) {
	if d.Spread != nil && f != nil {
		d.Spread.AddRates(f.Drain)
	}
}

// SpreadText is the lag spread in words ("max/mean 2.90, cv 1.40 over 3
// partitions; most on orders/2 (870 of 900, 97%): skewed").
func (s *LagSpread) SpreadText() string {
	out := fmt.Sprintf("max/mean %.2f, cv %.2f over %d partitions", s.MaxOverMean, s.CV, s.Partitions)
	if s.MaxPartition != "" {
		out += fmt.Sprintf("; most on %s (%d of %d, %.0f%%)", s.MaxPartition, s.Max, s.Total, 100*float64(s.Max)/float64(s.Total))
	}
	if s.Skewed() {
		out += ": skewed"
	}
	return out
}

// HotText is the hot partitions in words ("" when rates are unknown).
func (s *LagSpread) HotText() string {
	if !s.RatesKnown {
		return ""
	}
	if len(s.Hot) == 0 {
		return fmt.Sprintf("none (produce max/mean %.2f)", s.ProduceMaxOverMean)
	}
	parts := make([]string, len(s.Hot))
	for i, h := range s.Hot {
		parts[i] = fmt.Sprintf("%s %.1f/s (%.0f%%, lag %d)", h.Partition, h.ProduceRate, 100*h.Share, h.Lag)
	}
	return strings.Join(parts, ", ")
}

// OwnershipText is the ownership in words.
func (o *Ownership) OwnershipText() string {
	if !o.Reported {
		return o.Note
	}
	var parts []string
	if len(o.Unowned) > 0 {
		parts = append(parts, fmt.Sprintf("%d lagging partitions owned by no member (%s; lag %d)", len(o.Unowned), strings.Join(o.Unowned, ", "), o.UnownedLag))
	}
	if len(o.Idle) > 0 {
		parts = append(parts, fmt.Sprintf("%d members own no partition (%s)", len(o.Idle), strings.Join(o.Idle, ", ")))
	}
	if len(parts) == 0 {
		return "every lagging partition has an owner; every member owns partitions"
	}
	if o.Note != "" {
		parts = append(parts, o.Note)
	}
	return strings.Join(parts, "; ")
}
