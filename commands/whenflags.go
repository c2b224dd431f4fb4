package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/when"
)

// Every time, duration and size flag reads internal/when's one grammar
// (30d, 90s, 1h30m, P1D, RFC 3339, 1GiB): durationFlag is the flag,
// flagDuration reads it.

// durationValue is a duration flag's value.
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := when.ParseDuration(s)
	if err != nil {
		return err
	}
	v.d = d
	return nil
}

func (v *durationValue) String() string { return when.Format(v.d) }

// durationFlag is a duration flag of internal/when's grammar, default def.
func durationFlag(name string, def time.Duration, usage string, category ...string) *cli.GenericFlag {
	f := &cli.GenericFlag{Name: name, Value: &durationValue{d: def}, Usage: usage}
	if len(category) > 0 {
		f.Category = category[0]
	}
	return f
}

// flagDuration is the value of a durationFlag.
func flagDuration(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok {
		return v.d
	}
	return 0
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
