package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/when"
)

// Every time, duration and size flag reads internal/when's one grammar
// (30d, 90s, 1h30m, P1D, RFC 3339, 1GiB): a duration flag is
// completion.DurationFlag, bound to its options field; a time is
// parseWhen's, a size flagSize's.

// timeUsage names the forms every time flag (--since, --until,
// --to-history, --history-since) takes; parseWhen reads them.
const timeUsage = when.TimeForms

// parseWhen reads the time flag named flag (internal/when's grammar: a
// date-time, a date, epoch s or ms, or a duration back from now), so every
// time flag reads the same forms.
func parseWhen(flag, s string, now time.Time, g *Globals) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, note, err := when.ParseTime(s, now)
	if err != nil {
		return time.Time{}, exit.UsageErrorf("--%s %q: %v", flag, s, err)
	}
	if note != "" {
		g.Warnf("--%s: %s", flag, note)
	}
	return t, nil
}

// parseWindow reads --since and --until against the run's clock: either may
// be absent (zero); both given, --until may not come first.
func parseWindow(since, until string, g *Globals) (from, to time.Time, err error) {
	now := g.Now()
	if from, err = parseWhen("since", since, now, g); err != nil {
		return from, to, err
	}
	if to, err = parseWhen("until", until, now, g); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return from, to, exit.UsageErrorf("--until (%s) is before --since (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	return from, to, nil
}

// flagSize reads a size flag given as a string (internal/when's grammar).
func flagSize(c *cli.Context, name string) (int64, error) {
	s := c.String(name)
	if s == "" {
		return 0, nil
	}
	n, err := when.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("--%s %q: %v", name, s, err)
	}
	return n, nil
}
