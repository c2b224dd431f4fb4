package inspect

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// A verdict is one group's answer to "is it behind, and why": built only
// from what the other surfaces compute (the read model's lag and
// incidents, the health window's conditions and forecasts, the routing
// row, the coordinator moves), ranked by severity, each finding with the
// command that shows or fixes it. The rules are tables: explainRules says
// what each condition, incident and routing issue means and which
// command comes next.

// Verdict severities, worst first.
const (
	VerdictPage    = "page"
	VerdictWarning = "warning"
	VerdictOK      = "ok"
)

// VerdictSeverities lists them, worst first.
var VerdictSeverities = []string{VerdictPage, VerdictWarning, VerdictOK}

// VerdictRank orders severities (0 = worst).
func VerdictRank(s string) int {
	if i := slices.Index(VerdictSeverities, s); i >= 0 {
		return i
	}
	return len(VerdictSeverities)
}

// Finding kinds: where a finding comes from.
const (
	FindingCondition = "condition" // a health condition over the window (health.go)
	FindingIncident  = "incident"  // a read-model incident (state.go)
	FindingForecast  = "forecast"  // time to drain or retention (forecast.go)
	FindingRouting   = "routing"   // the group's coordinator and entries (groups.go's issues)
	FindingBlocker   = "blocker"   // what holds a stuck partition (VerdictBlocker)
)

// Finding codes of verdicts beyond conditions, incidents and issues.
const (
	ExplainNotDraining = "notDraining"
	ExplainRetention   = "retentionBreach"
)

// RetentionPageSeconds: a retention forecast this close pages (the
// exporter's KaasGroupRetentionBreach alert fires at the same bound);
// RetentionWarnSeconds: this close is a warning.
const (
	RetentionPageSeconds = 1800
	RetentionWarnSeconds = 86400
)

// explainRule is what one code means in a verdict: its severity and the
// next command's template, with why to run it. Placeholders: {flags} the
// volume, generation and connection flags given; {vol} the volume and
// generation flags; {journal} " --journal DIR" when one was given;
// {group} the group as an argument, {groupValue} as a flag's value;
// {topic}; {partition} (topic/p); {scope} the finding's partitions of
// that topic as --topic takes them (topic:0,2).
type explainRule struct {
	kind     string
	severity string
	command  string
	why      string
}

// explainRules, in the order findings of one severity are listed.
var explainRules = []struct {
	code string
	explainRule
}{
	{IncServedBehind, explainRule{FindingIncident, VerdictPage, "kaasctl doctor{flags}",
		"names the leaders serving below their segments and the fix for this generation"}},
	{IncPastServedEnd + "/staleEnd", explainRule{FindingIncident, VerdictPage, "kaasctl doctor{flags}",
		"the committed offset is past a stale served end: doctor names the leaders and what brings their segments' end back; do not reset until then"}},
	{IncPastServedEnd, explainRule{FindingIncident, VerdictPage, "kaasctl groups describe{flags} {group}",
		"shows where each consumer resumes and the log end served; a recreated or truncated topic needs a reset"}},
	{IncPastLogEnd, explainRule{FindingIncident, VerdictPage, "kaasctl volume check{vol}",
		"checks the committed offsets against the segments and says what the volume shows"}},
	{IncWrittenTwice, explainRule{FindingIncident, VerdictPage, "kaasctl volume check{vol}",
		"names the offset range written twice after a takeover at a stale end"}},
	{IncBelowLogStart, explainRule{FindingIncident, VerdictPage, "kaasctl offsets reset{flags} --group {groupValue} --topic {scope} --to-earliest",
		"plans (dry run) an explicit reset to the log start instead of leaving it to auto.offset.reset; add --execute with the group stopped"}},
	{IncReadsEmpty, explainRule{FindingIncident, VerdictPage, "kaasctl volume repair{vol}",
		"plans (dry run) the conversion of plain-map files this generation reads as empty"}},
	{HealthRewind, explainRule{FindingCondition, VerdictPage, "kaasctl offsets history{vol}{journal} {group}",
		"shows who moved the committed offsets back (the journal and kaasctl's backups) and the restore command"}},
	{HealthVanished, explainRule{FindingCondition, VerdictPage, "kaasctl offsets history{vol}{journal} {group}",
		"shows which partitions left the offset file and when, and the restore command"}},
	{HealthBlocked, explainRule{FindingCondition, VerdictPage, "kaasctl groups describe{flags} --why {group}",
		"names what holds the partition (the record or transaction at its committed offset), its evidence and the fix"}},
	{HealthStop, explainRule{FindingCondition, VerdictPage, "kaasctl groups describe{flags} --members {group}",
		"shows whether the group still has members (stuck) or none (stopped)"}},
	{ExplainRetention, explainRule{FindingForecast, VerdictPage, "kaasctl groups describe{flags} {group}",
		"shows the log start against each committed offset"}},
	{IssueNoCoordinator, explainRule{FindingRouting, VerdictPage, "kaasctl assignment show{vol}",
		"shows the brokers and their health: no alive broker can coordinate the group"}},
	{IssueEntryDeadBroker, explainRule{FindingRouting, VerdictPage, "kaasctl assignment diff{vol}",
		"audits the explicit entries: this one names a broker that is not alive, so every broker answers NOT_COORDINATOR"}},
	{IssueEntryUnknownBroker, explainRule{FindingRouting, VerdictPage, "kaasctl assignment diff{vol}",
		"audits the explicit entries: this one names a broker assignment.json does not list"}},
	{IssueNotReadDir, explainRule{FindingRouting, VerdictPage, "kaasctl volume check{vol}",
		"the offsets are only in a dir this generation's brokers do not read: a consumer that joins starts per auto.offset.reset"}},
	{HealthErr + "/file", explainRule{FindingCondition, VerdictWarning, "kaasctl volume check{vol}",
		"checks the offset file the brokers load"}},
	{HealthErr, explainRule{FindingCondition, VerdictWarning, "kaasctl doctor{flags}",
		"says which broker or coordinator does not answer"}},
	{HealthStall, explainRule{FindingCondition, VerdictWarning, "kaasctl groups describe{flags} --offsets {group}",
		"shows the partition standing still and its log end"}},
	{ExplainNotDraining, explainRule{FindingForecast, VerdictWarning, "kaasctl groups describe{flags} --members {group}",
		"shows how many members consume and which partitions each holds"}},
	{HealthWarn, explainRule{FindingCondition, VerdictWarning, "kaasctl groups health{flags} --window 5m --interval 15s {group}",
		"observes the trend over a longer window"}},
	{ExplainRetention + "/soon", explainRule{FindingForecast, VerdictWarning, "kaasctl groups describe{flags} {group}",
		"shows the log start against each committed offset"}},
	{IncDisagree, explainRule{FindingIncident, VerdictWarning, "kaasctl groups describe{flags} {group}",
		"shows which value a consumer resumes from (resumeRule)"}},
	{IncNotInFile, explainRule{FindingIncident, VerdictWarning, "kaasctl doctor{flags}",
		"lists the offsets served from memory that the file lacks (lost when the coordinator restarts)"}},
	{IncUncommittedPartitions, explainRule{FindingIncident, VerdictWarning, "kaasctl groups describe{flags} --offsets {group}",
		"lists the partitions without a committed offset"}},
	{IssueWireMismatch, explainRule{FindingRouting, VerdictWarning, "kaasctl whois{flags} --live {group}",
		"compares the coordinator assignment.json gives with the brokers' FindCoordinator"}},
	{IssueNoAssignment, explainRule{FindingRouting, VerdictWarning, "kaasctl volume check{vol}",
		"assignment.json cannot be read: the coordinator is unknown"}},
	{IssueCorruptFile, explainRule{FindingRouting, VerdictWarning, "kaasctl volume check{vol}",
		"the brokers ignore the group's offset file"}},
	{IssuePermissionDenied, explainRule{FindingRouting, VerdictWarning, "kaasctl volume check{vol}",
		"kaasctl may not read the group's offset file"}},
	{FindingBlocker, explainRule{FindingBlocker, VerdictPage, "kaasctl groups describe{flags} --why {group}",
		"names what holds the partition, its evidence and the fix"}},
}

// ruleOf is the rule of code (false: none).
func ruleOf(code string) (explainRule, int, bool) {
	for i, r := range explainRules {
		if r.code == code {
			return r.explainRule, i, true
		}
	}
	return explainRule{}, 0, false
}

// ExplainFinding is one reason a verdict is what it is.
type ExplainFinding struct {
	Kind     string `json:"kind"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	// Partition is the first partition it concerns ("" for the group);
	// Partitions all of them (incidents).
	Partition  string   `json:"partition,omitempty"`
	Partitions []string `json:"partitions,omitempty"`
	Detail     string   `json:"detail"`
	// Since is when it was first seen in the window (conditions).
	Since time.Time `json:"since,omitzero"`
	// Carried: a condition last known before an outage (health's rule).
	Carried bool `json:"carried,omitempty"`
	// Evidence is every fact of a condition (groups health's evidence).
	Evidence []HealthEvidence `json:"evidence,omitempty"`
	// Command shows or fixes it, with the flags given; Why says what it does.
	Command string `json:"command"`
	Why     string `json:"why"`
	order   int
}

// VerdictLag is the group's lag at the last observation.
type VerdictLag struct {
	Messages int64 `json:"messages"`
	Known    bool  `json:"known"`
	// UnknownPartitions is how many partitions the total leaves out.
	UnknownPartitions int     `json:"unknownPartitions"`
	Seconds           float64 `json:"seconds"`
	SecondsKnown      bool    `json:"secondsKnown"`
}

// VerdictCoordinator is the group's coordinator, computed from
// assignment.json and answered by the brokers.
type VerdictCoordinator struct {
	Computed        string `json:"computed"`
	Tier            string `json:"tier"`
	HashCoordinator string `json:"hashCoordinator"`
	ExplicitBroker  string `json:"explicitBroker"`
	// Answered is FindCoordinator's answer ("" when not asked or none).
	Answered    string `json:"answered"`
	AnswerError string `json:"answerError,omitempty"`
	State       string `json:"state"`
	Members     int    `json:"members"`
}

// VerdictNext is the command to run next.
type VerdictNext struct {
	Command string `json:"command"`
	Why     string `json:"why"`
	// For is the code of the finding it answers.
	For string `json:"for"`
}

// Verdict is one group's verdict.
type Verdict struct {
	Group    string `json:"group"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	// Findings are the active conditions, incidents, forecasts and
	// routing problems, worst first.
	Findings []ExplainFinding `json:"findings"`
	// Blocker is what holds its most lagging blocked partition (the read
	// model's blocker, as groups describe --why names it; nil: none
	// known); BlockedPartitions counts the partitions with one.
	Blocker           *VerdictBlocker    `json:"blocker"`
	BlockedPartitions int                `json:"blockedPartitions"`
	Lag               VerdictLag         `json:"lag"`
	Drain             *DrainEstimate     `json:"drain"`
	Retention         *RetentionForecast `json:"retention"`
	// LastCommit is when the group last committed, as the window saw it.
	LastCommit  time.Time          `json:"lastCommit,omitzero"`
	Coordinator VerdictCoordinator `json:"coordinator"`
	// Moves are the group's recent coordinator moves, oldest first.
	Moves []TraceEvent `json:"moves"`
	// Assumes is the kaas generation every finding assumes, in words.
	Assumes string `json:"assumes"`
	// Samples, From and To: the observations the verdict was built from.
	Samples int          `json:"samples"`
	From    time.Time    `json:"from"`
	To      time.Time    `json:"to"`
	Next    *VerdictNext `json:"next"`
}

// ExplainIncident is one read-model incident of a partition.
type ExplainIncident struct {
	Partition string
	PartitionIncident
}

// ExplainCommands fill the commands' placeholders.
type ExplainCommands struct {
	// Flags are the volume, generation and connection flags given
	// (" --data-dir /data -b kaas-0:9092"); VolumeFlags only the volume's
	// and generation's; Journal the journal DIR given ("" none).
	Flags, VolumeFlags, Journal string
}

// ExplainInput is everything a verdict is built from.
type ExplainInput struct {
	Group string
	// Health is the window's evaluation (nil: one observation, no window).
	Health *GroupHealth
	Lag    VerdictLag
	// Incidents are the partitions' read-model incidents at the last
	// observation; GroupIncidents the group's own.
	Incidents      []ExplainIncident
	GroupIncidents []PartitionIncident
	// Row is the group's routing row (coordinator, tier, issues, live).
	Row   GroupRow
	Moves []TraceEvent
	Gen   volume.GenerationInfo
	// Blockers are the read model's blockers of the group's lagging
	// partitions (observe's refresh: those whose committed offset stayed
	// between observations), when known.
	Blockers []PartitionBlocker
	Commands ExplainCommands
}

// Explain builds a group's verdict.
func Explain(in ExplainInput) Verdict {
	v := Verdict{Group: in.Group, Findings: []ExplainFinding{}, Lag: in.Lag, Moves: in.Moves, Assumes: in.Gen.Assumes()}
	if v.Moves == nil {
		v.Moves = []TraceEvent{}
	}
	v.Coordinator = verdictCoordinator(in.Row)
	add := func(code string, f ExplainFinding) {
		r, order, ok := ruleOf(code)
		if !ok {
			return
		}
		f.Kind, f.Severity, f.order = r.kind, r.severity, order
		if f.Code == "" {
			f.Code = code
		}
		f.Command, f.Why = fillCommand(r.command, in, f), r.why
		v.Findings = append(v.Findings, f)
	}
	if h := in.Health; h != nil {
		v.Drain, v.Retention, v.LastCommit = h.Drain, h.Retention, h.LastCommit
		v.Samples, v.From, v.To = h.Samples, h.From, h.To
		conditionFindings(h, add)
	}
	verdictIncidents(in, add)
	forecastFindings(&v, in, add)
	routingFindings(in.Row, add)
	blockerFindings(&v, in, add)
	finishVerdict(&v)
	return v
}

func verdictCoordinator(r GroupRow) VerdictCoordinator {
	c := VerdictCoordinator{Computed: r.Coordinator, Tier: r.Tier, HashCoordinator: r.HashCoordinator, ExplicitBroker: r.ExplicitBroker}
	if l := r.Live; l != nil {
		c.Answered, c.AnswerError, c.State, c.Members = l.WireCoordinator, l.WireError, l.State, l.Members
	}
	return c
}

// conditionFindings are the window's conditions, one finding each with
// every fact of it.
func conditionFindings(h *GroupHealth, add func(string, ExplainFinding)) {
	for _, c := range h.Conditions {
		if c == HealthOK {
			continue
		}
		var f ExplainFinding
		for _, e := range h.Evidence {
			if e.State != c {
				continue
			}
			if len(f.Evidence) == 0 {
				f.Partition, f.Detail, f.Since, f.Carried = e.Partition, e.Detail, e.Since, e.Carried
			}
			f.Evidence = append(f.Evidence, e)
		}
		code := c
		if c == HealthErr && (f.Evidence[0].File != "" || strings.HasPrefix(f.Detail, "offset file")) {
			code = HealthErr + "/file"
		}
		f.Code = c
		add(code, f)
	}
}

// verdictIncidents are the read model's incidents, one finding per code
// (the first partition named, the others counted in the detail).
func verdictIncidents(in ExplainInput, add func(string, ExplainFinding)) {
	parts := map[string][]string{}
	var firsts []ExplainIncident
	for _, inc := range in.Incidents {
		if parts[inc.Code] = append(parts[inc.Code], inc.Partition); len(parts[inc.Code]) == 1 {
			firsts = append(firsts, inc)
		}
	}
	for _, inc := range firsts {
		detail := inc.Detail
		if n := len(parts[inc.Code]); n > 1 {
			detail = fmt.Sprintf("%s (and %s more)", detail, render.Plural(n-1, "partition", "partitions"))
		}
		code := inc.Code
		if code == IncPastServedEnd && partitionHas(in.Incidents, inc.Partition, IncServedBehind, IncWrittenTwice) {
			code = IncPastServedEnd + "/staleEnd"
		}
		add(code, ExplainFinding{Code: inc.Code, Partition: inc.Partition, Partitions: parts[inc.Code], Detail: detail})
	}
	for _, gi := range in.GroupIncidents {
		add(gi.Code, ExplainFinding{Detail: gi.Detail})
	}
}

// partitionHas reports whether the partition has one of codes.
func partitionHas(incs []ExplainIncident, partition string, codes ...string) bool {
	for _, in := range incs {
		if in.Partition == partition && slices.Contains(codes, in.Code) {
			return true
		}
	}
	return false
}

// forecastFindings: a group not draining its lag, and a retention
// forecast close enough to matter (one already breached is the
// committedBelowLogStart incident when the read model saw it).
func forecastFindings(v *Verdict, in ExplainInput, add func(string, ExplainFinding)) {
	if d := v.Drain; d != nil && d.Known && d.NotDraining && d.Lag > 0 {
		add(ExplainNotDraining, ExplainFinding{Detail: fmt.Sprintf("lag %d is not shrinking: consumed %.1f/s, produced %.1f/s over %s (%d observations)",
			d.Lag, d.ConsumeRate, d.ProduceRate, FormatSeconds(d.WindowSeconds), d.Samples)})
	}
	r := v.Retention
	if r == nil || !r.Known {
		return
	}
	switch {
	case r.Breached:
		if !partitionHas(in.Incidents, r.Partition, IncBelowLogStart) {
			add(ExplainRetention, ExplainFinding{Partition: r.Partition, Detail: "records of " + r.Partition + " were deleted before the group read them (committed offset below the log start)"})
		}
	case r.Seconds < RetentionPageSeconds:
		add(ExplainRetention, ExplainFinding{Partition: r.Partition, Detail: "the log start passes the committed offset of " + r.Partition + " in " + FormatSeconds(r.Seconds) + ": unread records will be deleted"})
	case r.Seconds < RetentionWarnSeconds:
		add(ExplainRetention+"/soon", ExplainFinding{Code: ExplainRetention, Partition: r.Partition, Detail: "the log start passes the committed offset of " + r.Partition + " in " + FormatSeconds(r.Seconds)})
	}
}

// routingIssues are the routing row's issues a verdict reports, with what
// each means.
var routingIssues = map[string]string{
	IssueNoCoordinator:      "no alive broker can coordinate the group: clients get COORDINATOR_NOT_AVAILABLE",
	IssueEntryDeadBroker:    "its explicit entry in assignment.json names a broker that is not alive: every broker answers NOT_COORDINATOR until the controller retires it",
	IssueEntryUnknownBroker: "its explicit entry names a broker assignment.json does not list",
	IssueNotReadDir:         "its offsets are only in a dir the generation's brokers do not read",
	IssueWireMismatch:       "the brokers' FindCoordinator names another coordinator than assignment.json gives",
	IssueNoAssignment:       "assignment.json cannot be read: the coordinator is unknown",
	IssueCorruptFile:        "its offset file is corrupt: the brokers ignore it",
	IssuePermissionDenied:   "kaasctl may not read its offset file",
}

func routingFindings(r GroupRow, add func(string, ExplainFinding)) {
	for _, is := range r.Issues {
		if what, ok := routingIssues[is]; ok {
			detail := what
			switch is {
			case IssueWireMismatch:
				if r.Live != nil {
					detail = fmt.Sprintf("%s (%s, brokers answer %s)", what, orDash(r.Coordinator), orDash(r.Live.WireCoordinator))
				}
			case IssueEntryDeadBroker, IssueEntryUnknownBroker:
				detail = fmt.Sprintf("%s (%s)", what, r.ExplicitBroker)
			}
			add(is, ExplainFinding{Detail: detail})
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// finishVerdict sorts the findings worst first and sets the severity,
// summary and next step.
func finishVerdict(v *Verdict) {
	slices.SortStableFunc(v.Findings, func(a, b ExplainFinding) int {
		if d := VerdictRank(a.Severity) - VerdictRank(b.Severity); d != 0 {
			return d
		}
		return a.order - b.order
	})
	v.Severity = VerdictOK
	if len(v.Findings) > 0 {
		v.Severity = v.Findings[0].Severity
	}
	if b := v.Blocker; b != nil && b.Command != "" && v.Severity == VerdictPage {
		v.Next = &VerdictNext{Command: b.Command, Why: blockerWhy(*b), For: b.Kind}
	} else if len(v.Findings) > 0 && v.Findings[0].Command != "" {
		f := v.Findings[0]
		v.Next = &VerdictNext{Command: f.Command, Why: f.Why, For: f.Code}
	}
	v.Summary = verdictSummary(v)
}

// verdictSummary is the verdict in one line.
func verdictSummary(v *Verdict) string {
	lag := "lag unknown"
	if v.Lag.Known {
		lag = "lag " + render.Plural(int(v.Lag.Messages), "message", "messages")
		if v.Lag.SecondsKnown {
			lag += " (" + FormatSeconds(v.Lag.Seconds) + ")"
		}
	}
	if len(v.Findings) == 0 {
		return "ok: nothing wrong seen; " + lag
	}
	f := v.Findings[0]
	on := ""
	if f.Partition != "" {
		on = " on " + f.Partition
	}
	more := ""
	if n := len(v.Findings) - 1; n > 0 {
		more = fmt.Sprintf("; and %d more", n)
	}
	return fmt.Sprintf("%s%s: %s; %s%s", f.Code, on, firstClause(f.Detail), lag, more)
}

// firstClause is a detail's first clause (up to its first ": " or "; "),
// for the summary line.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ";"); i > 0 {
		s = s[:i]
	}
	return s
}

// fillCommand fills a command template for the group and the finding's
// partitions.
func fillCommand(tmpl string, in ExplainInput, f ExplainFinding) string {
	if tmpl == "" {
		return ""
	}
	topic, _ := splitPartition(f.Partition)
	var nums []string
	for _, p := range f.Partitions {
		if t, n := splitPartition(p); t == topic && n != "" {
			nums = append(nums, n)
		}
	}
	scope := topic
	if len(nums) > 0 {
		scope += ":" + strings.Join(nums, ",")
	}
	arg := shellQuote(in.Group)
	if strings.HasPrefix(in.Group, "-") {
		arg = "-- " + arg
	}
	journal := ""
	if in.Commands.Journal != "" {
		journal = " --journal " + shellQuote(in.Commands.Journal)
	}
	return strings.NewReplacer("{flags}", in.Commands.Flags, "{vol}", in.Commands.VolumeFlags, "{journal}", journal,
		"{group}", arg, "{groupValue}", shellQuote(in.Group), "{topic}", shellQuote(topic), "{scope}", shellQuote(scope),
		"{partition}", shellQuote(f.Partition)).Replace(tmpl)
}

// splitPartition splits "topic/p" (the partition number "" when there is
// none).
func splitPartition(p string) (topic, num string) {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}
