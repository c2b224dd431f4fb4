package commands

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
)

// IOStreams is where a command reads and writes. Tests pass buffers; the
// binary passes the process's streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool
	ErrTTY bool
	// Getenv reads the environment (os.Getenv unless a test overrides it).
	Getenv func(string) string
	// Now is the clock for ages, "now" in time expressions and observation
	// times (time.Now unless a test pins it).
	Now func() time.Time
	// Process is true for the process's own streams (System): only then
	// does a write run catch SIGINT/SIGTERM, which are the process's (an
	// in-process test run must not take another test's signal).
	Process bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:      os.Stdin,
		Out:     os.Stdout,
		Err:     os.Stderr,
		OutTTY:  isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrTTY:  isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv:  os.Getenv,
		Now:     time.Now,
		Process: true,
	}
}

func (s *IOStreams) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// now reads the clock.
func (s *IOStreams) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}
