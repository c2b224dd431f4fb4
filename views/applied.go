package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// ReportGroups prints each group's refusal, error and skip on w (stderr),
// its warnings and notes through g: one error line per refused group, as
// Kafka's tool does.
func ReportGroups(w io.Writer, g render.Notes, plans []*repair.GroupPlan) {
	for _, gp := range plans {
		switch gp.Outcome {
		case repair.OutcomeError:
			fmt.Fprintf(w, "Error: group '%s': %s\n", render.Clean(gp.Group), render.Clean(gp.Error))
		case repair.OutcomeSkipped:
			if strings.HasPrefix(gp.Skipped, "No reset plan") {
				fmt.Fprintf(w, "Error: %s\n", render.Clean(gp.Skipped))
			} else {
				g.Notef("skipped: %s", gp.Skipped)
			}
		case repair.OutcomeRefused:
			fmt.Fprintf(w, "Error: %s\n", render.Clean(gp.Refused))
		}
		if gp.PlainMap && gp.Error == "" {
			g.Warnf("%s is a plain map, which Rust 0.2.18 brokers read as EMPTY (the volume is taken to be 0.2.18); the write converts it to the v2 envelope", gp.Path)
		}
		for _, w := range gp.Warnings {
			g.Warnf("group '%s': %s", volume.DisplayName(gp.Group), w)
		}
		if gp.Executed && gp.Backup != "" {
			g.Notef("group '%s': backup of the old file: %s", volume.DisplayName(gp.Group), gp.Backup)
		}
	}
}

// ApplyRun is what a write run was: its command (reset, delete), whether
// it wrote (--execute) and whether brokers were asked.
type ApplyRun struct {
	Command       string
	Execute, Live bool
}

// NoteApplied is the closing line of a write run on stderr.
func NoteApplied(g render.Notes, run ApplyRun, res repair.ApplyResult, applyErr error) {
	cmd := run.Command
	switch {
	case !run.Execute:
		g.Warnf("No action will be performed as the --execute option is missing: nothing was written. Rerun with --execute to apply this plan.")
	case res.Written == 0 && res.Unchanged > 0 && applyErr == nil:
		g.Notef("%s: nothing to change: %s already hold(s) the planned offsets; nothing was written", cmd, render.Plural(res.Unchanged, "group", "groups"))
	case res.Written+res.Unchanged > 0 && applyErr == nil:
		how := "in the offset file"
		if run.Live {
			how = "in the offset file and with OffsetFetch"
		}
		unchanged := ""
		if res.Unchanged > 0 {
			unchanged = fmt.Sprintf(" (%s already held the planned offsets: not written)", render.Plural(res.Unchanged, "group", "groups"))
		}
		g.Notef("%s done: %s written, %d partition(s) verified %s; %d other committed partition(s) kept unchanged%s", cmd, render.Plural(res.Written, "group", "groups"), res.Verified, how, res.Kept, unchanged)
	case res.Written+res.Unchanged > 0:
		g.Notef("%s: %d group(s) written, %d refused, %d skipped, %d not plannable", cmd, res.Written+res.Unchanged, res.Refused, res.Skipped, res.Errors)
	case applyErr != nil:
		g.Warnf("nothing was written")
	}
}

// ForceBanner is printed on w (stderr) when --force overrides a refusal.
func ForceBanner(w io.Writer, plans []*repair.GroupPlan) {
	for _, gp := range plans {
		if gp.Refused != "" && gp.Error == "" && gp.Skipped == "" {
			fmt.Fprintf(w, "\n!!! --force: writing group '%s' although: %s\n!!! its consumers race this write; kaas brokers do not fence admin commits.\n\n", render.Clean(gp.Group), render.Clean(gp.Refused))
		}
	}
}

// NoteRollbackPlan says where offsets reset --export-rollback wrote the
// plan that undoes the run and the command that applies it (its groups by
// name up to ten, else --all-groups; flags: the volume and connection
// flags given).
func NoteRollbackPlan(g render.Notes, name string, plans []*repair.GroupPlan, flags string) {
	scope := " --all-groups"
	if len(plans) <= 10 {
		scope = ""
		for _, gp := range plans {
			scope += " --group " + render.ShellQuote(gp.Group)
		}
	}
	g.Notef("rollback plan: %s (apply with: kaasctl offsets reset%s --from-file %s%s --execute)", name, scope, render.ShellQuote(name), flags)
}
