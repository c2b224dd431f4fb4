package commands

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

const offsetsUsage = "reset and delete committed offsets safely (dry-run by default)"

// The reset specifications, in Kafka's order.
var resetSpecFlags = []string{"to-datetime", "by-duration", "to-earliest", "to-latest", "shift-by", "from-file", "to-current", "to-offset", "to-history", "to-history-before-anomaly"}

func init() {
	registerSub("offsets", offsetsUsage, func() *cli.Command {
		return &cli.Command{
			Name:  "reset",
			Usage: "reset committed offsets of inactive groups (Kafka's full reset matrix; dry-run unless --execute)",
			Description: "Plans a reset for every partition in scope, clamped to [log start, log end], and prints it.\n" +
				"Unless every group is Empty or Dead it refuses (exit 4, nothing written; a dry-run says so too).\n" +
				"With --execute it then commits each group's\n" +
				"FULL set of offsets (the offset file merged with the changes) to its coordinator: a partial commit\n" +
				"to a kaas coordinator that has not loaded the group would rewrite the file with only the submitted\n" +
				"partitions. Afterwards it re-reads the offset file and fetches the offsets back, and reports every\n" +
				"partition OK or MISMATCH.\n\n" +
				"--offline writes the offset file directly (backup beside it, unique temp file, fsync, rename, fsync of\n" +
				"the directory; aborted if the file changed meanwhile). Only when no broker answers, or with --force.\n\n" +
				"Examples:\n" +
				"  kaasctl offsets reset -b HOST:9092 --data-dir /data --group orders-app --topic orders --to-earliest\n" +
				"  kaasctl offsets reset ... --group orders-app --all-topics --shift-by -100 --execute\n" +
				"  kaasctl offsets reset ... --group g --all-topics --to-datetime 2026-11-29T03:00:00Z --export > plan.csv\n" +
				"  kaasctl offsets reset ... --group g --from-file plan.csv --execute",
			Flags: append(append(writeSafetyFlags(),
				&cli.GenericFlag{Name: "group", Aliases: []string{"g"}, Value: &repeatedFlag{}, Usage: "group to reset (repeatable)"},
				&cli.BoolFlag{Name: "all-groups", Usage: "every group: offset files on the volume and groups the brokers list"},
				&cli.BoolFlag{Name: "all-topics", Usage: "scope: every partition the group has committed offsets for"},
				&cli.GenericFlag{Name: "topic", Aliases: []string{"t"}, Value: &repeatedFlag{}, Usage: "scope: `TOPIC` (every partition) or TOPIC:0,2 (repeatable)"},
				&cli.BoolFlag{Name: "to-earliest", Usage: "spec: the log start offset", Category: "Reset specification (exactly one)"},
				&cli.BoolFlag{Name: "to-latest", Usage: "spec: the log end offset", Category: "Reset specification (exactly one)"},
				&cli.BoolFlag{Name: "to-current", Usage: "spec: the committed offset (the log end where none)", Category: "Reset specification (exactly one)"},
				&cli.StringFlag{Name: "to-offset", Usage: "spec: offset `N` on every partition in scope", Category: "Reset specification (exactly one)"},
				&cli.StringFlag{Name: "shift-by", Usage: "spec: move the committed offset by `±N`", Category: "Reset specification (exactly one)"},
				&cli.StringFlag{Name: "to-datetime", Usage: "spec: first offset at or after `TIME` (YYYY-MM-DDTHH:mm:SS[.sss][Z|±hh:mm], or epoch ms)", Category: "Reset specification (exactly one)"},
				&cli.StringFlag{Name: "by-duration", Usage: "spec: first offset at or after now minus `DURATION` (PT1H, P1DT2H, 1h, 90m)", Category: "Reset specification (exactly one)"},
				&cli.StringFlag{Name: "from-file", Usage: "spec: offsets from a CSV `FILE` (topic,partition,offset or group,topic,partition,offset)", Category: "Reset specification (exactly one)"},
				&cli.BoolFlag{Name: "export", Usage: "print the plan as CSV on stdout (for --from-file)"},
			), historyResetFlags()...),
			Action: runOffsetsReset,
		}
	})
}

// writeSafetyFlags are shared by offsets reset and offsets delete.
func writeSafetyFlags() []cli.Flag {
	const cat = "Safety"
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "only print the plan (the default)", Category: cat},
		&cli.BoolFlag{Name: "execute", Aliases: []string{"x"}, Usage: "apply the plan", Category: cat},
		&cli.BoolFlag{Name: "force", Usage: "write even if a group is not Empty/Dead or brokers answer with --offline (loud; consumers race the write)", Category: cat},
		&cli.BoolFlag{Name: "offline", Usage: "write the offset files directly instead of committing through the brokers (only when no broker answers, or with --force)", Category: cat},
	}
}

// writeMode is what the safety flags resolved to.
type writeMode struct {
	execute, force, offline bool
}

func parseWriteMode(c *cli.Context) (writeMode, error) {
	if c.Bool("dry-run") && c.Bool("execute") {
		return writeMode{}, exit.UsageErrorf("Option \"[%s]\" only accepts one of [execute] and [dry-run]", c.Command.Name)
	}
	return writeMode{execute: c.Bool("execute"), force: c.Bool("force"), offline: c.Bool("offline")}, nil
}

// writeCommandArgs starts offsets reset and delete, which take flags only:
// the globals and the safety flags' write mode (cmd names the command in
// the usage error).
func writeCommandArgs(c *cli.Context, cmd string) (*Globals, writeMode, error) {
	g, err := globals(c)
	if err != nil {
		return nil, writeMode{}, err
	}
	if c.NArg() > 0 {
		return nil, writeMode{}, exit.UsageErrorf("%s takes no arguments (got %q): name groups with --group", cmd, c.Args().First())
	}
	m, err := parseWriteMode(c)
	if err != nil {
		return nil, writeMode{}, err
	}
	return g, m, nil
}

// writeTarget resolves the volume a write goes to and connects as
// connectForWrite does; the caller closes the client (nil offline).
func writeTarget(ctx context.Context, g *Globals, m writeMode) (volume.Layout, *wire.Client, error) {
	l, err := g.Layout()
	if err != nil {
		return volume.Layout{}, nil, err
	}
	cl, err := connectForWrite(ctx, g, m)
	if err != nil {
		return volume.Layout{}, nil, err
	}
	return l, cl, nil
}

// connectForWrite returns a live client, or nil offline, enforcing the
// rules: the live path needs brokers; --offline needs every broker down or
// --force.
func connectForWrite(ctx context.Context, g *Globals, m writeMode) (*wire.Client, error) {
	if !m.offline {
		if !g.HasBrokers() {
			return nil, exit.UsageErrorf("no brokers given (--brokers, %s or a profile): kaasctl checks the group's state and commits through its coordinator; if every broker is down, use --offline", wire.EnvName(wire.KeyBrokers))
		}
		cl, err := g.Client(ctx)
		if err != nil {
			if exit.Code(err) == exit.Usage {
				return nil, err
			}
			return nil, fmt.Errorf("%v\nif every broker is down, rerun with --offline to write the offset files directly", err)
		}
		return cl, nil
	}
	if g.HasBrokers() {
		cl, err := g.Client(ctx)
		if err == nil {
			cl.Close()
			if !m.force {
				return nil, exit.Refusedf("--offline: the brokers answer, so a coordinator may hold the group in memory and overwrite the file on its next commit; drop --offline to go through the coordinator, or add --force if you are sure no broker has the group loaded")
			}
			g.Warnf("--offline --force: the brokers answer, but kaasctl writes the offset files directly; a broker that has the group loaded will overwrite them on its next commit")
		} else {
			g.Notef("no broker answered (%v): writing offline", oneLineErr(err))
		}
	}
	g.Warnf("offline: the group state is unknown; make sure every consumer of the group is stopped and no broker has it loaded (restart its coordinator after the write, or its cache brings the old offsets back)")
	return nil, nil
}

func oneLineErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// forceBanner is printed when --force overrides a refusal.
func forceBanner(g *Globals, plans []*repair.GroupPlan) {
	for _, gp := range plans {
		if gp.Refused != "" && gp.Error == "" {
			fmtf(g.IO.Err, "\n!!! --force: writing group '%s' although: %s\n!!! its consumers race this write; kaas brokers do not fence admin commits.\n\n", volume.DisplayName(gp.Group), gp.Refused)
		}
	}
}

// selectGroups resolves --group / --all-groups.
func selectGroups(ctx context.Context, c *cli.Context, l volume.Layout, cl *wire.Client) ([]string, error) {
	given := repeated(c, "group")
	all := c.Bool("all-groups")
	if len(given) > 0 && all {
		return nil, exit.UsageErrorf("Option \"[group]\" can't be used with option \"[all-groups]\"")
	}
	if len(given) == 0 && !all {
		return nil, exit.UsageErrorf("Option '[%s]' takes one of these options: --group, --all-groups", c.Command.Name)
	}
	if !all {
		out := []string{}
		for _, g := range given {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out, nil
	}
	set := map[string]bool{}
	_, err := volume.ScanOffsets(l, volume.ScanOptions{NamesOnly: true}, func(it *volume.OffsetScanItem) error {
		if it.Layout == volume.OffsetsCurrent && len(it.NameProblems) == 0 {
			set[it.Group] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cl != nil {
		answers, err := cl.ListGroupsEveryBroker(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing groups: %w", err)
		}
		for _, a := range answers {
			for _, lg := range a.Groups {
				set[lg.Group] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		if _, err := repair.GroupFilePath(l, g); err != nil {
			warnf(c, "--all-groups: skipping %v", err)
			continue
		}
		out = append(out, g)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("--all-groups: no group found on the volume (%s) or on the brokers", l.OffsetsPath())
	}
	return out, nil
}

func warnf(c *cli.Context, format string, a ...any) {
	fmtf(iosFrom(c).Err, "warning: "+format+"\n", a...)
}

// parseResetSpec reads exactly one reset specification.
func parseResetSpec(c *cli.Context, now time.Time, g *Globals) (repair.Spec, error) {
	var set []string
	for _, f := range resetSpecFlags {
		if c.IsSet(f) {
			set = append(set, f)
		}
	}
	if len(set) == 0 {
		return repair.Spec{}, exit.UsageErrorf("Option '[reset-offsets]' requires one of the following scenarios: --%s", strings.Join(resetSpecFlags, ", --"))
	}
	if len(set) > 1 {
		return repair.Spec{}, exit.UsageErrorf("Option \"[%s]\" can't be used with option \"[%s]\"", set[0], set[1])
	}
	var sp repair.Spec
	switch f := set[0]; f {
	case "to-earliest":
		sp.Kind = repair.ToEarliest
	case "to-latest":
		sp.Kind = repair.ToLatest
	case "to-current":
		sp.Kind = repair.ToCurrent
	case "to-offset":
		n, err := strconv.ParseInt(strings.TrimSpace(c.String(f)), 10, 64)
		if err != nil || n < 0 {
			return sp, exit.UsageErrorf("--to-offset %q: an offset is a whole number >= 0", c.String(f))
		}
		sp.Kind, sp.Offset = repair.ToOffset, n
	case "shift-by":
		n, err := strconv.ParseInt(strings.TrimSpace(c.String(f)), 10, 64)
		if err != nil {
			return sp, exit.UsageErrorf("--shift-by %q: a whole number, e.g. -100 or +20", c.String(f))
		}
		sp.Kind, sp.Shift = repair.ShiftBy, n
	case "to-datetime":
		t, note, err := repair.ParseDateTime(c.String(f), time.Local)
		if err != nil {
			return sp, exit.UsageErrorf("%v", err)
		}
		if note != "" {
			g.Warnf("%s", note)
		}
		sp.Kind, sp.Time = repair.ToDatetime, t
	case "by-duration":
		d, err := repair.ParseDuration(c.String(f))
		if err != nil {
			return sp, exit.UsageErrorf("%v", err)
		}
		sp.Kind, sp.Time = repair.ByDuration, now.Add(-d)
	case "from-file":
		name := c.String(f)
		fh, err := os.Open(name)
		if err != nil {
			return sp, exit.UsageErrorf("--from-file: %v", err)
		}
		defer fh.Close()
		fp, err := repair.ParseResetCSV(fh, name)
		if err != nil {
			return sp, exit.UsageErrorf("--from-file: %v", err)
		}
		sp.Kind, sp.File = repair.FromFile, fp
	case "to-history", "to-history-before-anomaly":
		return parseHistorySpec(c, f, g)
	}
	return sp, nil
}

// parseScopes reads --all-topics / --topic.
func parseScopes(c *cli.Context, required bool) (bool, []repair.TopicScope, error) {
	all := c.Bool("all-topics")
	topics := repeated(c, "topic")
	if all && len(topics) > 0 {
		return false, nil, exit.UsageErrorf("Option \"[all-topics]\" can't be used with option \"[topic]\"")
	}
	if !all && len(topics) == 0 && required {
		return false, nil, exit.UsageErrorf("One of the reset scopes should be defined: --all-topics, --topic.")
	}
	var scopes []repair.TopicScope
	for _, t := range topics {
		s, err := repair.ParseTopicScope(t)
		if err != nil {
			return false, nil, exit.UsageErrorf("%v", err)
		}
		scopes = append(scopes, s)
	}
	return all, scopes, nil
}

// resetView is the machine document of offsets reset and offsets delete.
type resetView struct {
	Command string              `json:"command"` // reset | delete
	Mode    string              `json:"mode"`    // dry-run | execute
	Path    string              `json:"path"`    // live | offline
	Spec    string              `json:"spec,omitempty"`
	Forced  bool                `json:"forced"`
	Groups  []*repair.GroupPlan `json:"groups"`
	Summary resetSummary        `json:"summary"`
	rows    []repair.ResetRow
}

type resetSummary struct {
	Groups     int `json:"groups"`
	Partitions int `json:"partitions"`
	Changed    int `json:"changed"`
	Refused    int `json:"refused"`
	Errors     int `json:"errors"`
	Failed     int `json:"failed"`
}

func buildResetView(cmd string, m writeMode, cl *wire.Client, spec string, plans []*repair.GroupPlan) *resetView {
	v := &resetView{Command: cmd, Mode: "dry-run", Path: "live", Spec: spec, Forced: m.force, Groups: plans}
	if m.execute {
		v.Mode = "execute"
	}
	if cl == nil {
		v.Path = "offline"
	}
	v.Summary.Groups = len(plans)
	for _, gp := range plans {
		if gp.Refused != "" {
			v.Summary.Refused++
		}
		if gp.Error != "" {
			v.Summary.Errors++
		}
		v.Summary.Failed += gp.Failed
		for _, r := range gp.Rows {
			v.Summary.Partitions++
			if r.Changed {
				v.Summary.Changed++
			}
			v.rows = append(v.rows, r)
		}
	}
	if v.rows == nil {
		v.rows = []repair.ResetRow{}
	}
	return v
}

func wrOptInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func rowNotes(r repair.ResetRow) string {
	var ns []string
	if r.Error != "" {
		ns = append(ns, "error: "+r.Error)
	}
	ns = append(ns, r.Warnings...)
	if r.Detail != "" && r.Result != repair.ResultOK {
		ns = append(ns, r.Detail)
	}
	return strings.Join(ns, "; ")
}

func printResetView(g *Globals, v *resetView) error {
	executed := v.Mode == "execute"
	var t *render.TableData
	if v.Command == "delete" {
		hdr := []string{"GROUP", "TOPIC", "PARTITION", "OFFSET", "ACTION"}
		if executed {
			hdr = append(hdr, "RESULT")
		}
		t = render.NewTable(append(hdr, "NOTES")...)
		for _, r := range v.rows {
			action := "delete"
			if !r.Changed {
				action = "none"
			}
			cells := []string{volume.DisplayName(r.Group), r.Topic, strconv.Itoa(int(r.Partition)), wrOptInt(r.Current), action}
			if executed {
				cells = append(cells, wrOrDash(r.Result))
			}
			t.Add(append(cells, rowNotes(r))...)
		}
	} else {
		hdr := []string{"GROUP", "TOPIC", "PARTITION", "CURRENT", "NEW", "LOG-START", "LOG-END"}
		if executed {
			hdr = append(hdr, "RESULT")
		}
		t = render.NewTable(append(hdr, "NOTES")...)
		for _, r := range v.rows {
			nw := strconv.FormatInt(r.New, 10)
			if r.Error != "" {
				nw = "-"
			}
			cells := []string{volume.DisplayName(r.Group), r.Topic, strconv.Itoa(int(r.Partition)), wrOptInt(r.Current), nw, wrOptInt(r.LogStart), wrOptInt(r.LogEnd)}
			if executed {
				cells = append(cells, wrOrDash(r.Result))
			}
			t.Add(append(cells, rowNotes(r))...)
		}
	}
	return g.Printer.Print(render.Output{Data: v, Items: v.rows, Table: t})
}

func wrOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// reportGroups prints each group's refusal, error and warnings on stderr.
func reportGroups(g *Globals, plans []*repair.GroupPlan) {
	for _, gp := range plans {
		if gp.Error != "" {
			fmtf(g.IO.Err, "Error: group '%s': %s\n", volume.DisplayName(gp.Group), gp.Error)
		} else if gp.Refused != "" {
			fmtf(g.IO.Err, "Error: %s\n", gp.Refused)
		}
		if gp.PlainMap && gp.Error == "" {
			g.Warnf("%s is a legacy plain map (kaas reads it as EMPTY); the write converts it to the v2 envelope", gp.Path)
		}
		for _, w := range gp.Warnings {
			g.Warnf("group '%s': %s", volume.DisplayName(gp.Group), w)
		}
		if gp.Executed && gp.Backup != "" {
			g.Notef("group '%s': backup of the old file: %s", volume.DisplayName(gp.Group), gp.Backup)
		}
	}
}

func runOffsetsReset(c *cli.Context) error {
	g, m, err := writeCommandArgs(c, "offsets reset")
	if err != nil {
		return err
	}
	now := time.Now()
	spec, err := parseResetSpec(c, now, g)
	if err != nil {
		return err
	}
	allTopics, scopes, err := parseScopes(c, spec.Kind != repair.FromFile && !spec.FromHistory())
	if err != nil {
		return err
	}
	if len(repeated(c, "group")) == 0 && !c.Bool("all-groups") {
		return exit.UsageErrorf("Option '[%s]' takes one of these options: --group, --all-groups", "reset-offsets")
	}
	if len(repeated(c, "group")) > 0 && c.Bool("all-groups") {
		return exit.UsageErrorf("Option \"[group]\" can't be used with option \"[all-groups]\"")
	}
	ctx := c.Context
	l, cl, err := writeTarget(ctx, g, m)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	groups, err := selectGroups(ctx, c, l, cl)
	if err != nil {
		return err
	}
	if spec.FromHistory() {
		// The restore is planned as a from-file spec of the offsets then.
		if spec, err = historyResetSpec(c, g, l, groups, spec, scopes); err != nil {
			return err
		}
		allTopics, scopes = false, nil
	}
	plans, err := repair.PlanGroups(ctx, repair.Inputs{Layout: l, Client: cl, Now: now},
		repair.ResetOptions{Groups: groups, AllTopics: allTopics, Scopes: scopes, Spec: spec})
	if err != nil {
		return err
	}
	if err := exportRollback(c, g, plans); err != nil {
		return err
	}
	return finishWrite(c, g, m, cl, "reset", spec.String(), plans)
}

// finishWrite prints the plan (dry-run) or executes it, for reset and
// delete alike, and maps the outcome to the exit code.
func finishWrite(c *cli.Context, g *Globals, m writeMode, cl *wire.Client, cmd, spec string, plans []*repair.GroupPlan) error {
	export := cmd == "reset" && c.Bool("export")
	refused, errs := 0, 0
	for _, gp := range plans {
		if gp.Error != "" {
			errs++
		} else if gp.Refused != "" {
			refused++
		}
	}
	if !m.execute || (refused > 0 && !m.force) || errs > 0 {
		// Nothing is written: a dry-run, or a refusal/error in any group
		// stops the whole run before the first write.
		reportGroups(g, plans)
		v := buildResetView(cmd, writeMode{force: m.force}, cl, spec, plans)
		if export {
			if err := exportPlan(g, plans); err != nil {
				return err
			}
		} else if err := printResetView(g, v); err != nil {
			return err
		}
		if !m.execute {
			g.Warnf("No action will be performed as the --execute option is missing: nothing was written. Rerun with --execute to apply this plan.")
		} else {
			g.Warnf("nothing was written: every group must be plannable and inactive before kaasctl writes any of them")
		}
		switch {
		case refused > 0 && !m.force:
			return exit.Refusedf("%d group(s) refused: stop their consumers (state must be Empty or Dead), or use --force", refused)
		case errs > 0:
			return fmt.Errorf("%d group(s) cannot be planned; see the errors above", errs)
		}
		return nil
	}
	if m.force {
		forceBanner(g, plans)
	}
	ctx := c.Context
	nowFn := time.Now
	for _, gp := range plans {
		if !gp.Changes() {
			for i := range gp.Rows {
				gp.Rows[i].Result, gp.Rows[i].Detail = repair.ResultOK, "unchanged; nothing written"
			}
			continue
		}
		if cmd == "reset" && cl != nil {
			repair.ExecuteCommit(ctx, cl, gp)
		} else {
			if cmd == "delete" && cl != nil {
				// Re-check the state right before the file write.
				if st := liveState(ctx, cl, gp.Group); st != repair.StateEmpty && st != repair.StateDead && !m.force {
					gp.Refused = repair.InactiveRefusal(gp.Group, st)
					gp.Warnings = append(gp.Warnings, "not written: "+gp.Refused)
					gp.Failed++
					continue
				}
			}
			repair.WriteFile(gp, nowFn)
		}
	}
	reportGroups(g, plans)
	if cmd == "delete" {
		g.Warnf("a broker that has these groups loaded keeps the deleted offsets in memory and writes them back on its next commit to the group; restart the group's coordinator (or delete the whole group with DeleteGroups) if a consumer may commit before it forgets them")
	}
	v := buildResetView(cmd, m, cl, spec, plans)
	if export {
		if err := exportPlan(g, plans); err != nil {
			return err
		}
	} else if err := printResetView(g, v); err != nil {
		return err
	}
	if v.Summary.Failed > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d partition(s) failed or did not verify; see RESULT", v.Summary.Failed)}
	}
	kept := 0
	for _, gp := range plans {
		kept += gp.Kept
	}
	how := "in the offset file"
	if cl != nil && cmd == "reset" {
		how = "in the offset file and with OffsetFetch"
	}
	g.Notef("%s done: %d group(s), %d partition(s) verified %s; %d other committed partition(s) kept unchanged", cmd, len(plans), v.Summary.Partitions, how, kept)
	return nil
}

func liveState(ctx context.Context, cl *wire.Client, group string) string {
	coords, err := cl.FindCoordinators(ctx, []string{group}, false)
	if err != nil {
		return repair.StateUnknown
	}
	ds := cl.DescribeGroups(ctx, []string{group}, coords)
	if len(ds) != 1 || ds[0].Err != "" {
		return repair.StateUnknown
	}
	return ds[0].State
}

func exportPlan(g *Globals, plans []*repair.GroupPlan) error {
	var rows []repair.PlanRow
	for _, gp := range plans {
		if gp.Error != "" {
			continue
		}
		for _, r := range gp.Rows {
			rows = append(rows, r.PlanRow)
		}
	}
	return repair.ExportCSV(g.IO.Out, rows, len(plans) > 1)
}

// repeatedFlag is a repeatable string flag whose values may hold commas
// (--topic orders:0,2), unlike StringSliceFlag, which splits them.
type repeatedFlag struct{ vals []string }

func (r *repeatedFlag) Set(s string) error {
	// urfave/cli copies a flag given by its alias to its name by setting
	// the joined String(); that copy is not a new value.
	if len(r.vals) > 0 && s == r.String() {
		return nil
	}
	r.vals = append(r.vals, s)
	return nil
}
func (r *repeatedFlag) String() string { return strings.Join(r.vals, "\x00") }

func repeated(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatedFlag); ok && r != nil {
		return r.vals
	}
	return nil
}
