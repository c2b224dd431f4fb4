package commands

import (
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/repair"
)

// timeUsage names the forms every time flag (--since, --until,
// --to-history, --history-since) takes; parseWhen reads them.
const timeUsage = "YYYY-MM-DDTHH:mm:SS[Z|±hh:mm], a date, epoch s or ms, or a duration back from now: 90m, 2h, 1d, PT30M"

// parseWhen reads the time flag named flag (timeUsage): a date-time, a
// date, epoch s or ms, or a duration back from now (repair's --to-datetime
// and --by-duration grammars, so every time flag reads the same forms).
func parseWhen(flag, s string, now time.Time, g *Globals) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := repair.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, note, err := repair.ParseDateTime(s)
	if err != nil {
		return time.Time{}, exit.UsageErrorf("--%s: %v", flag, strings.TrimPrefix(err.Error(), "--to-datetime "))
	}
	if note != "" {
		g.Warnf("--%s: %s", flag, strings.TrimPrefix(note, "--to-datetime "))
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
