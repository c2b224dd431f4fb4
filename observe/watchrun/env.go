// Package watchrun is kaasctl watch's runs: following assignment.json
// version by version, every offset file of the live offsets dir and,
// with brokers, the groups' membership. A run builds its view (the types
// of docs.go) and tells each change as it happens through the Out its
// command hands in (Env.Output); how it is printed is views' part.
package watchrun

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/observe"
)

// Env is what a watch tells and prints with: its notes and warnings (and
// the findings of what it read), the run's clock, whether notes are
// silenced (-q), and its output.
type Env struct {
	Notes observe.Reporter
	Now   func() time.Time
	Quiet bool
	// Output starts the output of a run of this kind; a failed write
	// calls stop.
	Output func(kind OutKind, stop context.CancelFunc) Out
}

// OutKind is which run an Out prints.
type OutKind int

const (
	// AssignmentOut prints `watch`: assignment.json's versions and moves.
	AssignmentOut OutKind = iota
	// OffsetsOut prints `watch --offsets`: the offset files' changes and
	// the membership events.
	OffsetsOut
)

// Out is where a run prints. json and yaml print the whole view at End;
// the other formats stream each item as it comes, and the first failed
// write stops the run and is what End returns.
type Out interface {
	// AtEnd reports whether the whole view is printed at End (json, yaml).
	AtEnd() bool
	// NamesGaps reports whether a version's line names the gap before it
	// (table, wide); elsewhere the run warns of it.
	NamesGaps() bool
	// Version streams one followed version of assignment.json.
	Version(fv inspect.FollowedVersion)
	// Changes streams a batch of offset-file changes.
	Changes(cs []OffsetWatchEvent)
	// Member writes one membership event (Flush pushes it out).
	Member(ev MemberWatchEvent)
	// Flush pushes out what was written; a failed write stops the run.
	Flush()
	// End prints the whole view (json, yaml), or returns the first failed
	// write.
	End(view any) error
}
