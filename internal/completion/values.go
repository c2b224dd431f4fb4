package completion

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/when"
)

// kaasctl's own kinds of flag value: a duration of internal/when's one
// grammar (30d, 90s, 1h30m, P1D) and a repeatable value that may hold
// commas. Each writes the options field it is bound to.

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

// DurationFlag is a duration flag of internal/when's grammar that sets
// *dest, default def.
func DurationFlag(dest *time.Duration, name string, def time.Duration, usage string, category ...string) *cli.GenericFlag {
	*dest = def
	f := &cli.GenericFlag{Name: name, Value: &durationValue{d: dest}, Usage: usage}
	if len(category) > 0 {
		f.Category = category[0]
	}
	return f
}

// repeatedValue is a repeatable string flag's value whose values may hold
// commas (--topic orders:0,2), unlike StringSliceFlag, which splits them;
// each value is appended to *vals.
type repeatedValue struct{ vals *[]string }

// Repeated is a repeatable flag's value appending to dest (nil: to its
// own list, read with RepeatedValues).
func Repeated(dest *[]string) cli.Generic {
	if dest == nil {
		dest = new([]string)
	}
	return &repeatedValue{vals: dest}
}

func (r *repeatedValue) Set(s string) error {
	// urfave/cli copies a flag given by its alias to its name by setting
	// the joined String(); that copy is not a new value.
	if len(*r.vals) > 0 && s == r.String() {
		return nil
	}
	*r.vals = append(*r.vals, s)
	return nil
}

func (r *repeatedValue) String() string {
	if r.vals == nil {
		return ""
	}
	return strings.Join(*r.vals, "\x00")
}

// RepeatedValues are the values given to the Repeated flag called name.
func RepeatedValues(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatedValue); ok && r != nil {
		return *r.vals
	}
	return nil
}

// GenericKind names the kind of a generic flag's value: "duration",
// "stringList" (Repeated), or "" (a string).
func GenericKind(v cli.Generic) string {
	switch v.(type) {
	case *durationValue:
		return "duration"
	case *repeatedValue:
		return "stringList"
	}
	return ""
}
