package repair

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Outcomes of one group in ApplyOffsets.
const (
	OutcomePlanned   = "planned"   // dry-run: would be written
	OutcomeWritten   = "written"   // executed (see the rows' results)
	OutcomeUnchanged = "unchanged" // executed, nothing to change
	OutcomeRefused   = "refused"   // not inactive, or its state unknown (exit 4)
	OutcomeSkipped   = "skipped"   // nothing to plan (Kafka's "No reset plan for group X found")
	OutcomeError     = "error"     // cannot be planned (exit 1)
	// OutcomeInterrupted: not written, the run was interrupted (SIGINT,
	// SIGTERM) before this group.
	OutcomeInterrupted = "interrupted"
)

// ResultRefused marks, after --execute, the rows of a group that was
// refused or could not be planned: nothing was written for them.
const ResultRefused = "REFUSED"

// ResultUnchanged marks, after --execute, the rows of a group that
// already held the planned offsets: nothing was written, so nothing was
// verified either.
const ResultUnchanged = "UNCHANGED"

// ResultCached is a deleted partition the coordinator still serves from
// its cache after the file write.
const ResultCached = "CACHED"

// ApplyOptions says how ApplyOffsets applies plans made by PlanGroups.
type ApplyOptions struct {
	// Command is "reset", "delete" or "prune" (deletes and prunes rewrite
	// or remove the offset file; a prune also re-checks the coordinator's
	// hold on the group before each write).
	Command string
	// Client is the live connection; nil writes offline (files only).
	Client *wire.Client
	// Execute writes; false is a dry-run that only sets each group's
	// outcome.
	Execute bool
	// Force writes groups whose state refuses them (never groups with
	// an Error or a refused timestamp answer).
	Force bool
	// Now is the clock for backup names (default time.Now).
	Now func() time.Time
	// Names names brokers by their kaas name in messages (nil: by node id;
	// see inspect.NewNodeNamer).
	Names *inspect.NodeNamer
	// Stop, when set, is asked before each group is written: true ends the
	// run there. The group in flight is always finished (a write is never
	// cut in the middle); the groups not started are marked interrupted.
	Stop func() bool
	// Done, when set, is told about each group as soon as it is finished
	// (written, unchanged, failed, refused, skipped, interrupted), so the
	// caller can record progress as it happens.
	Done func(gp *GroupPlan)
	// What names the write in kaasctl's write log ("offsets reset
	// --to-earliest"; "": from Command).
	What string
}

// ApplyResult counts what ApplyOffsets did; the plans carry the details.
type ApplyResult struct {
	Plans []*GroupPlan
	// Groups by outcome.
	Planned, Written, Unchanged, Refused, Skipped, Errors, Interrupted int
	// Failed counts partitions that failed or did not verify; Cached the
	// deleted partitions a coordinator still serves from its cache.
	Failed, Cached int
	// Partitions counts the rows of the groups that were (or would be)
	// written; Kept the other committed partitions written back unchanged.
	Partitions, Kept int
	// Verified counts the rows of written groups that verified (OK):
	// nothing of an unchanged group is, since nothing of it was written.
	Verified int
}

// Writable reports whether the group is (or, in a dry-run, would be)
// written: what --export may list.
func (gp *GroupPlan) Writable() bool {
	switch gp.Outcome {
	case OutcomePlanned, OutcomeWritten, OutcomeUnchanged:
		return true
	}
	return false
}

// ApplyOffsets is the one safe write path for committed offsets (offsets
// reset, offsets delete, and every later feature that rewrites offsets).
// It takes the plans of PlanGroups and, group by group, as Kafka's tool does:
//
//   - skips a group that has nothing to plan (Skipped) and one that cannot
//     be planned (Error), and refuses a group that is not Empty or Dead
//     (Refused; --force overrides that, never an Error); the other groups
//     go on;
//   - in a dry-run, stops there: each group's Outcome says what would
//     happen;
//   - with Execute, writes each remaining group that changes: a reset with
//     a live Client commits the group's FULL set of offsets (the offset
//     file merged with the changes) to its coordinator, because a kaas
//     coordinator that has not loaded the group rewrites the file with
//     exactly the partitions a commit names; offline, and for every
//     delete, it rewrites the offset file through WriteFileAtomic (backup,
//     unique temp, fsync, rename, directory fsync, aborted if the file
//     changed since it was planned), re-checking a delete's group state
//     right before;
//   - verifies every written partition in the file and, with a Client,
//     over the wire (OffsetFetch from the coordinator): a reset row is OK
//     only when both hold the new offset; a deleted row that the
//     coordinator still serves from its cache is CACHED (the file is
//     right, the broker is not, until the coordinator restarts or the
//     group moves).
//
// The returned error carries the exit code of the run (nil when all is
// well), in this order: partitions that failed or did not verify, or
// groups that cannot be planned (1); refused groups (4); cached deleted
// offsets (3). Every group's outcome is in the plans either way, so the
// caller prints them before returning the error.
func ApplyOffsets(ctx context.Context, plans []*GroupPlan, opts ApplyOptions) (ApplyResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := ApplyResult{Plans: plans}
	timeRefused, logRefused := 0, 0
	for _, gp := range plans {
		switch {
		case gp.Skipped != "" && gp.Error == "":
			gp.Outcome = OutcomeSkipped
		case gp.Error != "":
			gp.Outcome = OutcomeError
			if gp.TimeRefused {
				timeRefused++
			}
			if gp.LogRefused {
				logRefused++
			}
		case gp.Refused != "" && !opts.Force:
			gp.Outcome = OutcomeRefused
		default:
			gp.Outcome = OutcomePlanned
		}
	}
	if opts.Execute {
		stopped := false
		for _, gp := range plans {
			stopped = stopped || (opts.Stop != nil && opts.Stop())
			switch {
			case gp.Outcome != OutcomePlanned:
				markNotWritten(gp)
			case stopped:
				gp.Outcome = OutcomeInterrupted
				gp.Warnings = append(gp.Warnings, "not written: the run was interrupted before this group")
				markNotWritten(gp)
			default:
				applyGroup(ctx, gp, opts)
				if gp.Outcome == OutcomeRefused {
					markNotWritten(gp)
				}
				recordWrite(gp, opts)
			}
			if opts.Done != nil {
				opts.Done(gp)
			}
		}
	}
	for _, gp := range plans {
		switch gp.Outcome {
		case OutcomePlanned:
			res.Planned++
		case OutcomeWritten:
			res.Written++
		case OutcomeUnchanged:
			res.Unchanged++
		case OutcomeRefused:
			res.Refused++
		case OutcomeSkipped:
			res.Skipped++
		case OutcomeError:
			res.Errors++
		case OutcomeInterrupted:
			res.Interrupted++
		}
		res.Failed += gp.Failed
		if gp.Writable() {
			res.Partitions += len(gp.Rows)
			res.Kept += gp.Kept
		}
		for _, r := range gp.Rows {
			if r.Result == ResultCached {
				res.Cached++
			}
			if gp.Outcome == OutcomeWritten && r.Result == ResultOK {
				res.Verified++
			}
		}
	}
	return res, res.err(timeRefused, logRefused)
}

func (res ApplyResult) err(timeRefused, logRefused int) error {
	switch {
	case res.Interrupted > 0:
		return fmt.Errorf("interrupted: %d group(s) written or unchanged before the signal, %d not written (each group's line above says which); a rerun of a relative spec (--shift-by, --by-duration) moves the written groups again: rerun only the groups not written", res.Written+res.Unchanged, res.Interrupted)
	case res.Failed > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d partition(s) failed or did not verify; see RESULT", res.Failed)}
	case logRefused > 0 && logRefused == res.Errors:
		return exit.Refusedf("%d group(s) refused: a log end kaasctl could not verify (no broker, no readable segment file, or one holding a bound kaas could never have written), or an incident of the partition's log (a commit past its end, an offset range written twice), would decide their offsets; nothing was written for them (see each row; %s plans the unreadable ones unchecked)", logRefused, UnverifiedFlag)
	case timeRefused > 0:
		return exit.Refusedf("%d group(s) refused: the brokers' offsets for that time contradict the records (see the errors above); nothing was written for them", timeRefused)
	case res.Errors > 0:
		return fmt.Errorf("%d group(s) cannot be planned and were skipped; see the errors above", res.Errors)
	case res.Refused > 0:
		return exit.Refusedf("%d group(s) refused: stop their consumers and rerun once the group is Empty or Dead. %s", res.Refused, ForceRisk)
	case res.Cached > 0:
		return &exit.CodedError{Code: exit.Problems, Err: fmt.Errorf("%d deleted offset(s) are still served by the coordinator's cache; see the warnings above", res.Cached)}
	}
	return nil
}

// ForceRisk is what --force risks, said wherever it is offered: kaas
// brokers do not fence admin commits by generation.
const ForceRisk = "--force writes anyway, but kaas brokers do not fence admin commits by generation: a running consumer is neither told nor stopped, so its next commit overwrites the reset offsets (or the reset overwrites the progress it made) with no error on either side; use it only when you know every consumer of the group is stopped"

// applyGroup writes and verifies one group that may be written.
func applyGroup(ctx context.Context, gp *GroupPlan, opts ApplyOptions) {
	if !gp.Changes() {
		for i := range gp.Rows {
			gp.Rows[i].Result, gp.Rows[i].Detail = ResultUnchanged, "the group already holds this offset; nothing written"
		}
		gp.Outcome = OutcomeUnchanged
		return
	}
	gp.Outcome = OutcomeWritten
	cl := opts.Client
	deletes := opts.Command == "delete" || opts.Command == "prune"
	if !deletes && cl != nil {
		ExecuteCommit(ctx, cl, gp)
		return
	}
	if deletes && cl != nil {
		// Re-check the state right before the file write (a prune also
		// whether the coordinator loaded the group since).
		refused := ""
		if opts.Command == "prune" {
			refused = pruneRecheck(ctx, cl, gp)
		} else if st := liveState(ctx, cl, gp.Group); st != StateEmpty && st != StateDead && !opts.Force {
			refused = InactiveRefusal(gp.Group, st)
		}
		if refused != "" {
			gp.Refused = refused
			gp.Warnings = append(gp.Warnings, "not written: "+gp.Refused)
			gp.Outcome = OutcomeRefused
			return
		}
	}
	WriteFile(gp, opts.Now)
	if deletes && cl != nil {
		verifyDeletedOnWire(ctx, cl, gp, opts.Names)
	}
}

// markNotWritten gives the rows of a group that is not written their
// result and why.
func markNotWritten(gp *GroupPlan) {
	why := fmt.Sprintf("not written: the group was refused (state %s)", gp.State)
	switch gp.Outcome {
	case OutcomeError:
		why = "not written: the group cannot be planned"
	case OutcomeSkipped:
		why = "not written: nothing to plan"
	case OutcomeInterrupted:
		why = "not written: the run was interrupted before this group"
	}
	for i := range gp.Rows {
		if r := &gp.Rows[i]; r.Result == "" {
			r.Result, r.Detail = ResultRefused, why
		}
	}
}

func liveState(ctx context.Context, cl *wire.Client, group string) string {
	coords, err := cl.FindCoordinators(ctx, []string{group}, false)
	if err != nil {
		return StateUnknown
	}
	ds := cl.DescribeGroups(ctx, []string{group}, coords)
	if len(ds) != 1 || ds[0].Err != "" {
		return StateUnknown
	}
	return ds[0].State
}

// verifyDeletedOnWire asks the coordinator for the deleted partitions. A
// kaas broker keeps a group's offsets in memory after the file lost them
// (the Go generation even after the group is Dead): it serves them to a
// starting consumer and writes them back on the next commit. Such rows are
// CACHED, with what clears the cache.
func verifyDeletedOnWire(ctx context.Context, cl *wire.Client, gp *GroupPlan, names *inspect.NodeNamer) {
	want := wire.TopicPartitions{}
	for _, r := range gp.Rows {
		if r.Delete && r.Result == ResultOK {
			want.Add(r.Topic, r.Partition)
		}
	}
	if len(want) == 0 {
		return
	}
	coords, err := cl.FindCoordinators(ctx, []string{gp.Group}, false)
	if err != nil {
		gp.Warnings = append(gp.Warnings, "OffsetFetch not checked (finding the coordinator: "+err.Error()+"): a broker may still serve the deleted offsets from its cache")
		return
	}
	co := coords[gp.Group]
	fetched := cl.FetchCommitted(ctx, map[string]wire.TopicPartitions{gp.Group: want}, coords)[gp.Group]
	if fetched.Err != "" && !fetched.NotFound {
		gp.Warnings = append(gp.Warnings, "OffsetFetch not checked ("+fetched.Err+"): a broker may still serve the deleted offsets from its cache")
		return
	}
	var cached []string
	for i := range gp.Rows {
		r := &gp.Rows[i]
		if !r.Delete || r.Result != ResultOK {
			continue
		}
		c, ok := fetched.Offsets[r.Topic][r.Partition]
		if ok && c.Err == "" && c.Offset >= 0 {
			r.Result = ResultCached
			r.Detail = fmt.Sprintf("not in the file, but the coordinator still serves offset %d from its cache", c.Offset)
			cached = append(cached, fmt.Sprintf("%s/%d=%d", r.Topic, r.Partition, c.Offset))
		} else {
			r.Detail = "not in the file, nor served by the coordinator"
		}
	}
	if len(cached) > 0 {
		who := fmt.Sprintf("node %d", co.NodeID)
		if names != nil {
			if n := names.Name(co.NodeID); n != "" && !strings.HasPrefix(n, "node ") {
				who = fmt.Sprintf("%s (node %d", n, co.NodeID)
				if co.Host != "" {
					who += fmt.Sprintf(", %s:%d", co.Host, co.Port)
				}
				who += ")"
				co.Host = ""
			}
		}
		if co.Host != "" {
			who += fmt.Sprintf(" (%s:%d)", co.Host, co.Port)
		}
		gp.Warnings = append(gp.Warnings, fmt.Sprintf(
			"the file no longer holds %s, but the group's coordinator, broker %s, still serves them from its offset cache: a consumer that starts now resumes there, and the group's next commit writes them back into the file. "+
				"Clear the cache before any consumer of the group starts: restart that broker (or move the group to another coordinator), then check with 'kaasctl groups describe %s' that no offset is served",
			strings.Join(cached, ", "), who, gp.Group))
	}
}
