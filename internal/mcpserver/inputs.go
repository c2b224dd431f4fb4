package mcpserver

// The typed arguments of kaasctl mcp's tools, one struct a tool: each
// field names the flag it stands for (`flag:"name"`), or `arg:""` for a
// positional argument; a tool's call turns them into its command's flags
// (Args). They name no file, broker or profile: a tool reads the volume,
// the brokers and the journal 'kaasctl mcp' was started with.

// WhoisInput are the whois tool's arguments.
type WhoisInput struct {
	Keys          []string `json:"keys" jsonschema:"group ids (transactional ids with txn)" arg:""`
	Txn           bool     `json:"txn,omitempty" jsonschema:"the keys are transactional ids" flag:"txn"`
	Live          bool     `json:"live,omitempty" jsonschema:"also ask the brokers (FindCoordinator) and flag disagreement" flag:"live"`
	WhatIfDown    []string `json:"whatIfDown,omitempty" jsonschema:"answer as if these brokers were down" flag:"what-if-down"`
	WhatIfBrokers []string `json:"whatIfBrokers,omitempty" jsonschema:"answer for exactly this alive broker set" flag:"what-if-brokers"`
	KeepListed    bool     `json:"keepListed,omitempty" jsonschema:"with whatIfDown: the brokers stay listed as dead (a stable divisor)" flag:"keep-listed"`
}

// GroupsListInput are the groups_list tool's arguments.
type GroupsListInput struct {
	Regex       string `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	IssuesOnly  bool   `json:"issuesOnly,omitempty" jsonschema:"only groups with an issue flag" flag:"issues-only"`
	Issue       string `json:"issue,omitempty" jsonschema:"only groups with this issue flag" flag:"issue"`
	Coordinator string `json:"coordinator,omitempty" jsonschema:"only groups this broker coordinates" flag:"coordinator"`
	Tier        string `json:"tier,omitempty" jsonschema:"only groups routed by this tier (explicit, hash, hash-fallback, none)" flag:"tier"`
	State       string `json:"state,omitempty" jsonschema:"only groups in these live states (comma separated)" flag:"state"`
	Topic       string `json:"topic,omitempty" jsonschema:"only groups with committed offsets on these topics (comma separated)" flag:"topic"`
}

// GroupsDescribeInput are the groups_describe tool's arguments.
type GroupsDescribeInput struct {
	Groups      []string `json:"groups,omitempty" jsonschema:"the groups (or all, or regex)" arg:""`
	All         bool     `json:"all,omitempty" jsonschema:"every group" flag:"all"`
	Regex       string   `json:"regex,omitempty" jsonschema:"the groups whose id matches this regular expression" flag:"regex"`
	Lag         string   `json:"lag,omitempty" jsonschema:"only groups whose total lag passes this filter (e.g. >1000)" flag:"lag"`
	Topic       string   `json:"topic,omitempty" jsonschema:"only these topics' partitions (comma separated)" flag:"topic"`
	LaggingOnly bool     `json:"laggingOnly,omitempty" jsonschema:"only partitions with lag" flag:"lagging-only"`
	DrainWindow string   `json:"drainWindow,omitempty" jsonschema:"observe over this window (e.g. 30s) for the time to drain and the retention forecast" flag:"drain-window"`
}

// GroupsHealthInput are the groups_health tool's arguments.
type GroupsHealthInput struct {
	Groups    []string `json:"groups,omitempty" jsonschema:"the groups (none: every group)" arg:""`
	Window    string   `json:"window,omitempty" jsonschema:"observe for this long (default 30s; within the call's time bound)" flag:"window"`
	Interval  string   `json:"interval,omitempty" jsonschema:"observe this often (default 5s)" flag:"interval"`
	Regex     string   `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	MaxGroups int      `json:"maxGroups,omitempty" jsonschema:"observe at most this many groups" flag:"max-groups"`
}

// GroupsExplainInput are the groups_explain tool's arguments.
type GroupsExplainInput struct {
	Groups     []string `json:"groups,omitempty" jsonschema:"the groups (none: every group)" arg:""`
	Window     string   `json:"window,omitempty" jsonschema:"observe for this long (default 30s; 0: once; within the call's time bound)" flag:"window"`
	Interval   string   `json:"interval,omitempty" jsonschema:"observe this often (default 5s)" flag:"interval"`
	Regex      string   `json:"regex,omitempty" jsonschema:"only groups whose id matches this regular expression" flag:"regex"`
	MaxGroups  int      `json:"maxGroups,omitempty" jsonschema:"observe at most this many groups" flag:"max-groups"`
	Problems   bool     `json:"problems,omitempty" jsonschema:"only the verdicts that are not ok" flag:"problems"`
	MovesSince string   `json:"movesSince,omitempty" jsonschema:"the coordinator moves of this last while (default 1d)" flag:"moves-since"`
}

// DoctorInput are the doctor tool's arguments.
type DoctorInput struct {
	Severity string `json:"severity,omitempty" jsonschema:"the least severity shown: info, warning or error" flag:"severity"`
	Offline  bool   `json:"offline,omitempty" jsonschema:"skip the live checks" flag:"offline"`
}

// VolumeCheckInput are the volume_check tool's arguments.
type VolumeCheckInput struct {
	Severity string `json:"severity,omitempty" jsonschema:"the least severity shown: info, warning or error" flag:"severity"`
}

// TakeoverTraceInput are the takeover_trace tool's arguments.
type TakeoverTraceInput struct {
	Groups     []string `json:"groups,omitempty" jsonschema:"only these groups (names or globs)" flag:"group"`
	Since      string   `json:"since,omitempty" jsonschema:"from this time (RFC 3339, a date, or a duration back from now: 2h)" flag:"since"`
	Until      string   `json:"until,omitempty" jsonschema:"up to this time" flag:"until"`
	Placements bool     `json:"placements,omitempty" jsonschema:"every group's coordinator at every version" flag:"placements"`
}

// PlanRestartInput are the plan_restart tool's arguments.
type PlanRestartInput struct {
	BrokersOrder []string `json:"brokersOrder,omitempty" jsonschema:"restart in this order (default: kaasctl's)" flag:"brokers-order"`
	Failover     string   `json:"failover,omitempty" jsonschema:"the controller failover model: reload or drop (default: the volume's generation's)" flag:"failover"`
	Placement    string   `json:"placement,omitempty" jsonschema:"how the controller places explicit entries: rendezvous or hash" flag:"placement"`
	AllActive    bool     `json:"allActive,omitempty" jsonschema:"count every group as active" flag:"all-active"`
	StepsOfAll   bool     `json:"stepsOfAll,omitempty" jsonschema:"list every group's moves at every step" flag:"steps-of-all"`
}

// PlanAssignmentInput are the plan_assignment tool's arguments.
type PlanAssignmentInput struct {
	Group      string   `json:"group" jsonschema:"the group" arg:""`
	Members    int      `json:"members,omitempty" jsonschema:"plan for this many hypothetical members" flag:"members"`
	Add        int      `json:"add,omitempty" jsonschema:"add this many members to the live ones" flag:"add"`
	NewMembers []string `json:"newMembers,omitempty" jsonschema:"add members with these ids" flag:"new-member"`
	Remove     []string `json:"remove,omitempty" jsonschema:"remove these members" flag:"remove"`
	Assignor   string   `json:"assignor,omitempty" jsonschema:"the assignor (range, roundrobin, sticky, cooperative-sticky)" flag:"assignor"`
	Topics     []string `json:"topics,omitempty" jsonschema:"the topics subscribed" flag:"topic"`
}

// OffsetsHistoryInput are the offsets_history tool's arguments.
type OffsetsHistoryInput struct {
	Group      string   `json:"group" jsonschema:"the group" arg:""`
	Since      string   `json:"since,omitempty" jsonschema:"from this time" flag:"since"`
	Until      string   `json:"until,omitempty" jsonschema:"up to this time" flag:"until"`
	Partitions []string `json:"partitions,omitempty" jsonschema:"only these partitions (TOPIC/P, TOPIC:0,2 or TOPIC)" flag:"partition"`
}

// OffsetsResetInput are the offsets_reset_plan tool's arguments.
type OffsetsResetInput struct {
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

// OffsetsDeleteInput are the offsets_delete_plan tool's arguments.
type OffsetsDeleteInput struct {
	Groups []string `json:"groups" jsonschema:"the groups" flag:"group"`
	Topics []string `json:"topics" jsonschema:"the topics (TOPIC or TOPIC:0,2)" flag:"topic"`
}

// VolumeRepairInput are the volume_repair_plan tool's arguments.
type VolumeRepairInput struct {
	TmpOlderThan string `json:"tmpOlderThan,omitempty" jsonschema:"temp files older than this are stale (default 1h)" flag:"tmp-older-than"`
}
