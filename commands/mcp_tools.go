package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render/views"
	"github.com/kaasctl/kaasctl/repair"
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

type whoisToolInput struct {
	Keys          []string `json:"keys" jsonschema:"group ids (transactional ids with txn)" arg:""`
	Txn           bool     `json:"txn,omitempty" jsonschema:"the keys are transactional ids" flag:"txn"`
	Live          bool     `json:"live,omitempty" jsonschema:"also ask the brokers (FindCoordinator) and flag disagreement" flag:"live"`
	WhatIfDown    []string `json:"whatIfDown,omitempty" jsonschema:"answer as if these brokers were down" flag:"what-if-down"`
	WhatIfBrokers []string `json:"whatIfBrokers,omitempty" jsonschema:"answer for exactly this alive broker set" flag:"what-if-brokers"`
	KeepListed    bool     `json:"keepListed,omitempty" jsonschema:"with whatIfDown: the brokers stay listed as dead (a stable divisor)" flag:"keep-listed"`
}

type groupsListToolInput struct {
	Regex       string `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	IssuesOnly  bool   `json:"issuesOnly,omitempty" jsonschema:"only groups with an issue flag" flag:"issues-only"`
	Issue       string `json:"issue,omitempty" jsonschema:"only groups with this issue flag" flag:"issue"`
	Coordinator string `json:"coordinator,omitempty" jsonschema:"only groups this broker coordinates" flag:"coordinator"`
	Tier        string `json:"tier,omitempty" jsonschema:"only groups routed by this tier (explicit, hash, hash-fallback, none)" flag:"tier"`
	State       string `json:"state,omitempty" jsonschema:"only groups in these live states (comma separated)" flag:"state"`
	Topic       string `json:"topic,omitempty" jsonschema:"only groups with committed offsets on these topics (comma separated)" flag:"topic"`
}

type groupsDescribeToolInput struct {
	Groups      []string `json:"groups,omitempty" jsonschema:"the groups (or all, or regex)" arg:""`
	All         bool     `json:"all,omitempty" jsonschema:"every group" flag:"all"`
	Regex       string   `json:"regex,omitempty" jsonschema:"the groups whose id matches this regular expression" flag:"regex"`
	Lag         string   `json:"lag,omitempty" jsonschema:"only groups whose total lag passes this filter (e.g. >1000)" flag:"lag"`
	Topic       string   `json:"topic,omitempty" jsonschema:"only these topics' partitions (comma separated)" flag:"topic"`
	LaggingOnly bool     `json:"laggingOnly,omitempty" jsonschema:"only partitions with lag" flag:"lagging-only"`
	DrainWindow string   `json:"drainWindow,omitempty" jsonschema:"observe over this window (e.g. 30s) for the time to drain and the retention forecast" flag:"drain-window"`
}

type groupsHealthToolInput struct {
	Groups    []string `json:"groups,omitempty" jsonschema:"the groups (none: every group)" arg:""`
	Window    string   `json:"window,omitempty" jsonschema:"observe for this long (default 30s; within the call's time bound)" flag:"window"`
	Interval  string   `json:"interval,omitempty" jsonschema:"observe this often (default 5s)" flag:"interval"`
	Regex     string   `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	MaxGroups int      `json:"maxGroups,omitempty" jsonschema:"observe at most this many groups" flag:"max-groups"`
}

type groupsExplainToolInput struct {
	Groups     []string `json:"groups,omitempty" jsonschema:"the groups (none: every group)" arg:""`
	Window     string   `json:"window,omitempty" jsonschema:"observe for this long (default 30s; 0: once; within the call's time bound)" flag:"window"`
	Interval   string   `json:"interval,omitempty" jsonschema:"observe this often (default 5s)" flag:"interval"`
	Regex      string   `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	MaxGroups  int      `json:"maxGroups,omitempty" jsonschema:"observe at most this many groups" flag:"max-groups"`
	Problems   bool     `json:"problems,omitempty" jsonschema:"only the verdicts that are not ok" flag:"problems"`
	MovesSince string   `json:"movesSince,omitempty" jsonschema:"the coordinator moves of this last while (default 1d)" flag:"moves-since"`
}

type doctorToolInput struct {
	Severity string `json:"severity,omitempty" jsonschema:"the least severity shown: info, warning or error" flag:"severity"`
	Offline  bool   `json:"offline,omitempty" jsonschema:"skip the live checks" flag:"offline"`
}

type volumeCheckToolInput struct {
	Severity string `json:"severity,omitempty" jsonschema:"the least severity shown: info, warning or error" flag:"severity"`
}

type takeoverTraceToolInput struct {
	Groups     []string `json:"groups,omitempty" jsonschema:"only these groups (names or globs)" flag:"group"`
	Since      string   `json:"since,omitempty" jsonschema:"from this time (RFC 3339, a date, or a duration back from now: 2h)" flag:"since"`
	Until      string   `json:"until,omitempty" jsonschema:"up to this time" flag:"until"`
	Placements bool     `json:"placements,omitempty" jsonschema:"every group's coordinator at every version" flag:"placements"`
}

type planRestartToolInput struct {
	BrokersOrder []string `json:"brokersOrder,omitempty" jsonschema:"restart in this order (default: kaasctl's)" flag:"brokers-order"`
	Failover     string   `json:"failover,omitempty" jsonschema:"the controller failover model: reload or drop (default: the volume's generation's)" flag:"failover"`
	Placement    string   `json:"placement,omitempty" jsonschema:"how the controller places explicit entries: rendezvous or hash" flag:"placement"`
	AllActive    bool     `json:"allActive,omitempty" jsonschema:"count every group as active" flag:"all-active"`
	StepsOfAll   bool     `json:"stepsOfAll,omitempty" jsonschema:"list every group's moves at every step" flag:"steps-of-all"`
}

type planAssignmentToolInput struct {
	Group      string   `json:"group" jsonschema:"the group" arg:""`
	Members    int      `json:"members,omitempty" jsonschema:"plan for this many hypothetical members" flag:"members"`
	Add        int      `json:"add,omitempty" jsonschema:"add this many members to the live ones" flag:"add"`
	NewMembers []string `json:"newMembers,omitempty" jsonschema:"add members with these ids" flag:"new-member"`
	Remove     []string `json:"remove,omitempty" jsonschema:"remove these members" flag:"remove"`
	Assignor   string   `json:"assignor,omitempty" jsonschema:"the assignor (range, roundrobin, sticky, cooperative-sticky)" flag:"assignor"`
	Topics     []string `json:"topics,omitempty" jsonschema:"the topics subscribed" flag:"topic"`
}

type offsetsHistoryToolInput struct {
	Group      string   `json:"group" jsonschema:"the group" arg:""`
	Since      string   `json:"since,omitempty" jsonschema:"from this time" flag:"since"`
	Until      string   `json:"until,omitempty" jsonschema:"up to this time" flag:"until"`
	Partitions []string `json:"partitions,omitempty" jsonschema:"only these partitions (TOPIC/P, TOPIC:0,2 or TOPIC)" flag:"partition"`
}

type offsetsResetToolInput struct {
	Groups                 []string `json:"groups,omitempty" jsonschema:"the groups to reset" flag:"group"`
	AllGroups              bool     `json:"allGroups,omitempty" jsonschema:"every group" flag:"all-groups"`
	Topics                 []string `json:"topics,omitempty" jsonschema:"the topics (TOPIC or TOPIC:0,2)" flag:"topic"`
	AllTopics              bool     `json:"allTopics,omitempty" jsonschema:"every topic the group committed on" flag:"all-topics"`
	ToEarliest             bool     `json:"toEarliest,omitempty" flag:"to-earliest"`
	ToLatest               bool     `json:"toLatest,omitempty" flag:"to-latest"`
	ToCurrent              bool     `json:"toCurrent,omitempty" flag:"to-current"`
	ToOffset               string   `json:"toOffset,omitempty" flag:"to-offset"`
	ShiftBy                string   `json:"shiftBy,omitempty" flag:"shift-by"`
	ToDatetime             string   `json:"toDatetime,omitempty" flag:"to-datetime"`
	ByDuration             string   `json:"byDuration,omitempty" flag:"by-duration"`
	ToGroup                string   `json:"toGroup,omitempty" jsonschema:"copy another group's offsets" flag:"to-group"`
	ToHistory              string   `json:"toHistory,omitempty" jsonschema:"restore the offsets the group had at this time (from the server's journal and kaasctl's backups)" flag:"to-history"`
	ToHistoryBeforeAnomaly bool     `json:"toHistoryBeforeAnomaly,omitempty" jsonschema:"restore the offsets from before the latest REWIND or VANISHED" flag:"to-history-before-anomaly"`
	HistorySince           string   `json:"historySince,omitempty" flag:"history-since"`
}

type offsetsDeleteToolInput struct {
	Groups []string `json:"groups" jsonschema:"the groups" flag:"group"`
	Topics []string `json:"topics" jsonschema:"the topics (TOPIC or TOPIC:0,2)" flag:"topic"`
}

type volumeRepairToolInput struct {
	TmpOlderThan string `json:"tmpOlderThan,omitempty" jsonschema:"temp files older than this are stale (default 1h)" flag:"tmp-older-than"`
}

// mcpTools are the tools kaasctl mcp serves.
func mcpTools() []mcpTool {
	return []mcpTool{
		{"whois", "Group coordinator", "Which broker coordinates each group (or transactional id), by which tier, and what a hypothetical broker set would change.",
			"whois-coordinator", whoisToolInput{}, []inspect.WhoisResult{}, nil, false, bind(parseWhois, runWhois)},
		{"groups_list", "Consumer groups", "Every consumer group from the volume and the brokers, with its coordinator, live state and issue flags.",
			"groups list", groupsListToolInput{}, views.GroupsListView{}, nil, false, bind(parseGroupsList, runGroupsList)},
		{"groups_describe", "Describe groups", "Groups' members and committed offsets per partition (file and coordinator), log bounds, lag, and the read model's incidents.",
			"groups describe", groupsDescribeToolInput{}, views.GroupsDescribeView{}, views.GroupsDescribeLiveView{}, false, bind(parseGroupsDescribe, runGroupsDescribe)},
		{"groups_explain", "Explain groups", "One verdict per group: ok, warning or page; why (conditions and incidents with evidence); lag in messages and seconds; time to drain; retention; coordinator and its moves; the next command to run.",
			"groups explain", groupsExplainToolInput{}, views.GroupsExplainView{}, nil, false, bind(parseGroupsExplain, runGroupsExplain)},
		{"groups_health", "Group health", "Each group's health over a window: REWIND, VANISHED, ERR, STOP, STALL, WARN or OK, with evidence, time to drain and retention forecast.",
			"groups health", groupsHealthToolInput{}, views.GroupsHealthView{}, nil, false, bind(parseGroupsHealth, runGroupsHealth)},
		{"doctor", "Doctor", "Every check of the volume and the brokers as one ranked report, with the fix for each finding.",
			"doctor", doctorToolInput{}, views.DoctorView{}, nil, false, bind(parseDoctor, runDoctor)},
		{"volume_check", "Volume check", "Every file of the volume kaasctl understands, checked: findings with severity, path and fix.",
			"volume check", volumeCheckToolInput{}, inspect.CheckReport{}, nil, false, bind(parseVolumeCheck, runVolumeCheck)},
		{"takeover_trace", "Takeover trace", "The coordinator timeline of the groups: when each moved, from which broker to which, and why.",
			"takeover trace", takeoverTraceToolInput{}, views.TraceView{}, nil, false, bindG(parseTakeoverTrace, runTakeoverTrace)},
		{"plan_restart", "Plan a rolling restart", "A rolling restart of the brokers in an order that moves the fewest groups, with each step's moves and waits.",
			"plan restart", planRestartToolInput{}, views.PlanRestartView{}, nil, false, bind(parsePlanRestart, runPlanRestart)},
		{"plan_assignment", "Plan a group's assignment", "Which member would own which partition with the group's assignor, for the live members or hypothetical ones.",
			"plan assignment", planAssignmentToolInput{}, views.PlanAssignmentView{}, nil, false, bind(parsePlanAssignment, runPlanAssignment)},
		{"offsets_history", "Offsets history", "A group's committed offsets over time per partition (the journal and kaasctl's backups), with REWIND and VANISHED marked.",
			"offsets history", offsetsHistoryToolInput{}, inspect.OffsetHistoryView{}, nil, false, bindG(parseOffsetsHistory, runOffsetsHistory)},
		{"offsets_reset_plan", "Plan an offsets reset or restore", "Plans (dry run) an offsets reset or a restore from history, checked as the command checks it; returns the plan and the command a person runs to apply it. Never writes.",
			"offsets reset", offsetsResetToolInput{}, views.ResetView{}, nil, true, bindPlan(parseOffsetsReset, func(o resetOptions) bool { return !o.mode.execute && o.exportRollback == "" }, runOffsetsReset)},
		{"offsets_delete_plan", "Plan an offsets delete", "Plans (dry run) deleting a group's committed offsets of topics; returns the plan and the command a person runs to apply it. Never writes.",
			"offsets delete", offsetsDeleteToolInput{}, views.ResetView{}, nil, true, bindPlan(parseOffsetsDelete, func(o deleteOptions) bool { return !o.mode.execute }, runOffsetsDelete)},
		{"volume_repair_plan", "Plan a volume repair", "Plans (dry run) the volume's repairs (quarantines, stale temp files, plain-map conversions on 0.2.18); returns the plan and the command a person runs to apply it. Never writes.",
			"volume repair", volumeRepairToolInput{}, repair.RepairReport{}, nil, true, bindPlan(parseVolumeRepair, func(o volumeRepairOptions) bool { return !o.execute }, runVolumeRepair)},
	}
}

// mcpWindowFlags are the flags whose duration a call must fit in.
var mcpWindowFlags = []string{"window", "drain-window"}

// mcpCallMargin is the time a call needs besides its observation window.
const mcpCallMargin = 15 * time.Second
