package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// The MCP tools: the read-only commands, and the writes as their dry runs
// (plans). Each runs its command's own parse (over the flags its typed
// arguments stand for) and run functions, in this process. Arguments name
// no file, broker or profile: a tool reads the volume, the brokers and the
// journal 'kaasctl mcp' was started with.

// mcpTool is one tool.
type mcpTool struct {
	name, title, description string
	// path is the command it runs.
	path string
	// input is its arguments' type (a struct whose fields carry the flag
	// they stand for: `flag:"name"`, or `arg:""` for positional ones).
	input any
	// doc is the document type the command prints (the result's
	// schema); liveDoc the one it prints with brokers, when another.
	doc, liveDoc any
	// plan: a write command planned, never executed (its dry run).
	plan bool
	// run parses the flags into the command's options and runs it.
	run func(ctx context.Context, g *Globals, c *cli.Context) error
}

// bind is a tool's run from a command's parse and run functions.
func bind[O any](parse func(*cli.Context) (O, error), run func(context.Context, *Globals, O) error) func(context.Context, *Globals, *cli.Context) error {
	return bindG(func(c *cli.Context, _ *Globals) (O, error) { return parse(c) }, run)
}

// bindG is bind for a parse that needs the run's Globals.
func bindG[O any](parse func(*cli.Context, *Globals) (O, error), run func(context.Context, *Globals, O) error) func(context.Context, *Globals, *cli.Context) error {
	return func(ctx context.Context, g *Globals, c *cli.Context) error {
		o, err := parse(c, g)
		if err != nil {
			return err
		}
		return run(ctx, g, o)
	}
}

// bindPlan is bind for a write command: the options it parses must be a
// dry run (dry says whether they are), or the call is refused before
// anything runs.
func bindPlan[O any](parse func(*cli.Context, *Globals) (O, error), dry func(O) bool, run func(context.Context, *Globals, O) error) func(context.Context, *Globals, *cli.Context) error {
	return bindG(func(c *cli.Context, g *Globals) (O, error) {
		o, err := parse(c, g)
		if err == nil && !dry(o) {
			err = errMCPWrite
		}
		return o, err
	}, run)
}

// mcpTools are the tools kaasctl mcp serves.
func mcpTools() []mcpTool {
	return []mcpTool{
		{"whois", "Group coordinator", "Which broker coordinates each group (or transactional id), by which tier, and what a hypothetical broker set would change.",
			"whois-coordinator", mcpserver.WhoisInput{}, []inspect.WhoisResult{}, nil, false, bind(parseWhois, runWhois)},
		{"groups_list", "Consumer groups", "Every consumer group from the volume and the brokers, with its coordinator, live state and issue flags.",
			"groups list", mcpserver.GroupsListInput{}, views.GroupsListView{}, nil, false, bind(parseGroupsList, runGroupsList)},
		{"groups_describe", "Describe groups", "Groups' members and committed offsets per partition (file and coordinator), log bounds, lag, and the read model's incidents.",
			"groups describe", mcpserver.GroupsDescribeInput{}, views.GroupsDescribeView{}, views.GroupsDescribeLiveView{}, false, bind(parseGroupsDescribe, runGroupsDescribe)},
		{"groups_explain", "Explain groups", "One verdict per group: ok, warning or page; why (conditions and incidents with evidence); lag in messages and seconds; time to drain; retention; coordinator and its moves; the next command to run.",
			"groups explain", mcpserver.GroupsExplainInput{}, views.GroupsExplainView{}, nil, false, bind(parseGroupsExplain, runGroupsExplain)},
		{"groups_health", "Group health", "Each group's health over a window: REWIND, VANISHED, ERR, STOP, STALL, WARN or OK, with evidence, time to drain and retention forecast.",
			"groups health", mcpserver.GroupsHealthInput{}, views.GroupsHealthView{}, nil, false, bind(parseGroupsHealth, runGroupsHealth)},
		{"doctor", "Doctor", "Every check of the volume and the brokers as one ranked report, with the fix for each finding.",
			"doctor", mcpserver.DoctorInput{}, views.DoctorView{}, nil, false, bind(parseDoctor, runDoctor)},
		{"volume_check", "Volume check", "Every file of the volume kaasctl understands, checked: findings with severity, path and fix.",
			"volume check", mcpserver.VolumeCheckInput{}, inspect.CheckReport{}, nil, false, bind(parseVolumeCheck, runVolumeCheck)},
		{"takeover_trace", "Takeover trace", "The coordinator timeline of the groups: when each moved, from which broker to which, and why.",
			"takeover trace", mcpserver.TakeoverTraceInput{}, views.TraceView{}, nil, false, bindG(parseTakeoverTrace, runTakeoverTrace)},
		{"plan_restart", "Plan a rolling restart", "A rolling restart of the brokers in an order that moves the fewest groups, with each step's moves and waits.",
			"plan restart", mcpserver.PlanRestartInput{}, views.PlanRestartView{}, nil, false, bind(parsePlanRestart, runPlanRestart)},
		{"plan_assignment", "Plan a group's assignment", "Which member would own which partition with the group's assignor, for the live members or hypothetical ones.",
			"plan assignment", mcpserver.PlanAssignmentInput{}, views.PlanAssignmentView{}, nil, false, bind(parsePlanAssignment, runPlanAssignment)},
		{"offsets_history", "Offsets history", "A group's committed offsets over time per partition (the journal and kaasctl's backups), with REWIND and VANISHED marked.",
			"offsets history", mcpserver.OffsetsHistoryInput{}, inspect.OffsetHistoryView{}, nil, false, bindG(parseOffsetsHistory, runOffsetsHistory)},
		{"offsets_reset_plan", "Plan an offsets reset or restore", "Plans (dry run) an offsets reset or a restore from history, checked as the command checks it; returns the plan and the command a person runs to apply it. Never writes.",
			"offsets reset", mcpserver.OffsetsResetInput{}, views.ResetView{}, nil, true, bindPlan(parseOffsetsReset, func(o resetOptions) bool { return !o.mode.execute && o.exportRollback == "" }, runOffsetsReset)},
		{"offsets_delete_plan", "Plan an offsets delete", "Plans (dry run) deleting a group's committed offsets of topics; returns the plan and the command a person runs to apply it. Never writes.",
			"offsets delete", mcpserver.OffsetsDeleteInput{}, views.ResetView{}, nil, true, bindPlan(parseOffsetsDelete, func(o deleteOptions) bool { return !o.mode.execute }, runOffsetsDelete)},
		{"volume_repair_plan", "Plan a volume repair", "Plans (dry run) the volume's repairs (quarantines, stale temp files, plain-map conversions on 0.2.18); returns the plan and the command a person runs to apply it. Never writes.",
			"volume repair", mcpserver.VolumeRepairInput{}, repair.RepairReport{}, nil, true, bindPlan(parseVolumeRepair, func(o volumeRepairOptions) bool { return !o.execute }, runVolumeRepair)},
	}
}
