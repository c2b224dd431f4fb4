package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/when"
)

// Every time, duration and size flag reads internal/when's one grammar
// (30d, 90s, 1h30m, P1D, RFC 3339, 1GiB): durationFlag is the flag, bound
// to its options field; flagSize reads a size. Repeatable values that may
// hold commas are repeatedFlag's.

// durationValue is a duration flag's value: it writes *d.
type durationValue struct{ d *time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := when.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v *durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return when.Format(*v.d)
}

// durationFlag is a duration flag of internal/when's grammar that sets
// *dest, default def.
func durationFlag(dest *time.Duration, name string, def time.Duration, usage string, category ...string) *cli.GenericFlag {
	*dest = def
	f := &cli.GenericFlag{Name: name, Value: &durationValue{d: dest}, Usage: usage}
	if len(category) > 0 {
		f.Category = category[0]
	}
	return f
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

// repeatedFlag is a repeatable string flag whose values may hold commas
// (--topic orders:0,2), unlike StringSliceFlag, which splits them; each
// value is appended to *vals.
type repeatedFlag struct{ vals *[]string }

// repeatedOf is a repeatedFlag appending to dest (nil: to its own list,
// read with repeated).
func repeatedOf(dest *[]string) *repeatedFlag {
	if dest == nil {
		dest = new([]string)
	}
	return &repeatedFlag{vals: dest}
}

// repeated is the values of the repeatedFlag called name.
func repeated(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatedFlag); ok && r != nil {
		return *r.vals
	}
	return nil
}

func (r *repeatedFlag) Set(s string) error {
	// urfave/cli copies a flag given by its alias to its name by setting
	// the joined String(); that copy is not a new value.
	if len(*r.vals) > 0 && s == r.String() {
		return nil
	}
	*r.vals = append(*r.vals, s)
	return nil
}

func (r *repeatedFlag) String() string {
	if r.vals == nil {
		return ""
	}
	return strings.Join(*r.vals, "\x00")
}
