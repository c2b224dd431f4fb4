package commands

import (
	"io"
	"os"

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
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv: os.Getenv,
	}
}

func (s *IOStreams) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}
