package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
)

// pruneApplied adds up what the write path did over the batches.
type pruneApplied struct {
	written, refused, errors, failed, cached, interrupted int
}

func (a *pruneApplied) add(res repair.ApplyResult) {
	a.written += res.Written
	a.refused += res.Refused
	a.errors += res.Errors
	a.failed += res.Failed
	a.cached += res.Cached
	a.interrupted += res.Interrupted
}

// apply writes the writable groups through the one write path, a batch
// at a time: each batch's files read again and planned (repair.PlanPrune),
// recorded in the rollback file (synced) before any of them is written,
// then written and verified (repair.ApplyOffsets), and the results copied
// into the plan. A signal ends the run after the group being written.
func (r *pruneRun) apply(ctx context.Context) error {
	rb, closeRB, err := r.openRollback()
	if err != nil {
		return err
	}
	defer closeRB()
	stop := onInterrupt(r.g)
	defer stop.release()
	todo := r.writable()
	prog := r.g.Progress("pruning (groups)", int64(len(todo)))
	defer prog.Done()
	in := repair.Inputs{Layout: r.l, Client: r.cl, Now: r.g.Now(), Policy: r.o.mode.policy}
	for i := 0; i < len(todo); i += pruneBatch {
		batch := todo[i:min(i+pruneBatch, len(todo))]
		if stop.requested() {
			r.markInterrupted(todo[i:])
			break
		}
		plans := repair.PlanPrune(in, pruneItems(batch))
		if rb != nil {
			if err := rb.Plans(plans); err != nil {
				return fmt.Errorf("--export-rollback %s: %w; nothing more was written", r.o.rollback, err)
			}
		}
		opts := repair.ApplyOptions{Command: "prune", Client: r.cl, Execute: true, Names: r.names, Stop: stop.requested,
			Done: func(gp *repair.GroupPlan) {
				prog.Add(1)
				if rb != nil {
					rb.Outcome(gp, r.g.Now())
				}
			}}
		res, _ := repair.ApplyOffsets(ctx, plans, opts)
		r.applied.add(res)
		copyPruneResults(batch, plans)
	}
	r.checkStillListed(ctx, todo)
	return nil
}

// openRollback creates the --export-rollback file (nil without it).
func (r *pruneRun) openRollback() (*repair.RollbackWriter, func(), error) {
	if r.o.rollback == "" {
		return nil, func() {}, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if r.o.overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(r.o.rollback, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, checkRollbackTarget(r.o.rollback, false)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--export-rollback: %w", err)
	}
	rb, err := repair.NewRollbackWriter(f, r.g.Now(), r.gen)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("--export-rollback %s: %w", r.o.rollback, err)
	}
	r.g.Notef("rollback: %s (every planned group's file, byte for byte; put them back with: kaasctl groups prune --restore %s%s --execute)", r.o.rollback, views.ShellQuote(r.o.rollback), r.g.GivenFlags())
	return rb, func() { rb.Sync(); f.Close() }, nil
}

// pruneItems are the write path's items for the groups.
func pruneItems(groups []*inspect.PruneGroup) []repair.PruneItem {
	out := make([]repair.PruneItem, 0, len(groups))
	for _, pg := range groups {
		it := repair.PruneItem{Group: pg.Group, Remove: pg.Action == inspect.PruneRemove, State: pg.State, StateSource: "live", Coordinator: -1, Entries: len(pg.Rows) + pg.Kept}
		if pg.State == "unknown" {
			it.StateSource = "offline"
		}
		for _, row := range pg.Pruned() {
			it.Drop = append(it.Drop, volume.OffsetEntry{Topic: row.Topic, Partition: row.Partition, Offset: row.Offset})
		}
		out = append(out, it)
	}
	return out
}

// copyPruneResults copies each plan's outcome and rows' results into the
// prune's groups (plans are in the groups' order).
func copyPruneResults(groups []*inspect.PruneGroup, plans []*repair.GroupPlan) {
	for i, gp := range plans {
		pg := groups[i]
		pg.Outcome, pg.Backup = gp.Outcome, gp.Backup
		pg.Warnings = append(pg.Warnings, gp.Warnings...)
		if gp.Error != "" {
			pg.Warnings = append(pg.Warnings, gp.Error)
		}
		if gp.Outcome == repair.OutcomeRefused && pg.Refused == "" {
			pg.Refused = gp.Refused
		}
		res := map[string]repair.ResetRow{}
		for _, row := range gp.Rows {
			res[row.Topic+"/"+strconv.Itoa(int(row.Partition))] = row
		}
		for j := range pg.Rows {
			row := &pg.Rows[j]
			if rr, ok := res[row.Topic+"/"+strconv.Itoa(int(row.Partition))]; ok {
				row.SetResult(rr.Result, rr.Detail)
			}
		}
	}
}

// markInterrupted marks the groups a signal left unwritten.
func (r *pruneRun) markInterrupted(groups []*inspect.PruneGroup) {
	for _, pg := range groups {
		pg.Outcome = repair.OutcomeInterrupted
		pg.Warnings = append(pg.Warnings, "not written: the run was interrupted before this group")
		r.applied.interrupted++
	}
}

// checkStillListed asks every broker's ListGroups again after the writes:
// a broker that still lists a pruned group holds it in memory, and
// restarting that broker is what clears it.
func (r *pruneRun) checkStillListed(ctx context.Context, groups []*inspect.PruneGroup) {
	if r.cl == nil {
		return
	}
	var pruned []string
	for _, pg := range groups {
		if pg.Outcome == repair.OutcomeWritten {
			pruned = append(pruned, pg.Group)
		}
	}
	if len(pruned) == 0 {
		return
	}
	gg, err := r.cl.GatherGroups(ctx, wire.GroupRounds{})
	if err != nil {
		r.g.Warnf("after the prune, ListGroups could not be asked (%v): a broker may still hold a pruned group in memory", err)
		return
	}
	r.stillListed = repair.StillListed(gg.Listings, pruned, r.names.Name)
	for _, pg := range groups {
		if bs := r.stillListed[pg.Group]; len(bs) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("pruned from the volume, but %s still list(s) the group (it is in memory there): a consumer that joins resumes from that memory and the group's next commit writes the offsets back; restart %s before any consumer of the group starts",
				render.Clean(joinNames(bs)), render.Clean(joinNames(bs))))
		}
	}
}

func joinNames(ns []string) string {
	if len(ns) == 1 {
		return "broker " + ns[0]
	}
	s := "brokers "
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// exitErr is the run's exit: the cap's refusal, then (execute) what the
// writes did, then refused rows or groups (4), then offsets a broker
// still serves from memory (3).
func (r *pruneRun) exitErr(capErr error) error {
	if capErr != nil {
		return capErr
	}
	a := r.applied
	refusedRows, refusedGroups := 0, 0
	for _, pg := range r.groups {
		if n := pg.Refusals(); n > 0 {
			refusedRows += n
			refusedGroups++
		}
	}
	switch {
	case a.interrupted > 0:
		return fmt.Errorf("interrupted: %d group(s) pruned before the signal, %d not written (each group's outcome above says which); rerun the prune for the rest", a.written, a.interrupted)
	case a.failed > 0 || a.errors > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d group(s) could not be written and %d partition(s) failed or did not verify; see the warnings and RESULT", a.errors, a.failed)}
	case refusedGroups > 0:
		return exit.Refusedf("%s refused (%s kept although selected): each says why; nothing was written for them", render.Plural(refusedGroups, "group", "groups"), render.Plural(refusedRows, "partition or group", "partitions or groups"))
	case a.cached > 0 || len(r.stillListed) > 0:
		return &exit.CodedError{Code: exit.Problems, Err: fmt.Errorf("%d pruned offset(s) are still served by a coordinator's memory and %d pruned group(s) still listed by a broker; see the warnings: restart the brokers named", a.cached, len(r.stillListed))}
	}
	return nil
}
