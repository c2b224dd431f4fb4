package commands

import (
	"regexp"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/observe"
)

// Shared plumbing of the offline commands (groups list/describe, txn,
// volume check): reading the assignment leniently, the injectable clock,
// and regex flags.

const flagNow = "now"

// nowFlag is a hidden flag that pins the run's one clock (globals sets
// IOStreams.Now from it, in internal/when's time grammar), for
// reproducible overdue and age figures in tests and post-mortems.
func nowFlag() cli.Flag {
	return &cli.StringFlag{Name: flagNow, Hidden: true, Usage: "evaluate ages and overdue transactions at this time instead of the clock (" + when.TimeForms + ")"}
}

// pinClock pins ios's clock to --now when it is given.
func pinClock(c *cli.Context, ios *IOStreams) error {
	s := c.String(flagNow)
	if s == "" {
		return nil
	}
	t, _, err := when.ParseTime(s, ios.now())
	if err != nil {
		return exit.UsageErrorf("--now %q: %v", s, err)
	}
	t = t.UTC()
	ios.Now = func() time.Time { return t }
	return nil
}

// severityFlag filters the findings of volume check and doctor.
func severityFlag() cli.Flag {
	return &cli.StringFlag{Name: "severity", Aliases: []string{"s"}, Value: "info", Usage: "show findings of at least `LEVEL`: info, warning, error"}
}

// parseSeverity reads --severity.
func parseSeverity(c *cli.Context) (volume.Severity, error) {
	min, err := inspect.ParseSeverity(c.String("severity"))
	if err != nil {
		return "", exit.UsageErrorf("--severity: %v", err)
	}
	return min, nil
}

// offlineAssignment reads assignment.json for commands that can still work
// without it: problems become warnings on stderr and a nil assignment.
func offlineAssignment(g *Globals, l volume.Layout) *volume.Assignment {
	return offlineAssignmentFor(g, l, nil)
}

// offlineAssignmentFor is offlineAssignment keeping the explicit entries of
// groups only (all when nil), and warning about those entries only.
func offlineAssignmentFor(g *Globals, l volume.Layout, groups []string) *volume.Assignment {
	a, fs, err := observe.ReadAssignmentFor(l, groups)
	if err != nil {
		g.Warnf("%v; coordinators are unknown (tier none)", err)
		return nil
	}
	g.WarnFindings(fs)
	return a
}

func compileRegex(flag, s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, exit.UsageErrorf("--%s %q: %v", flag, s, err)
	}
	return re, nil
}
