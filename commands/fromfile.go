package commands

import (
	"errors"
	"io"
	"io/fs"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// loadFromFile reads the --from-file plan of a reset into o.spec (nothing
// for other specs) and applies Kafka's rules: every row is applied, so
// --topic and --all-topics are dropped with a warning; a file whose rows
// name no group goes with one --group only.
func loadFromFile(g *Globals, o *resetOptions) error {
	if o.spec.Kind != repair.FromFile {
		return nil
	}
	fp, err := readFromFile(g, o.fromFile)
	if err != nil {
		return err
	}
	o.spec.File = fp
	if o.allTopics || len(o.scopes) > 0 {
		g.Warnf("--from-file applies every row of the file; --topic and --all-topics are ignored with it (as kafka-consumer-groups.sh does)")
		o.allTopics, o.scopes = false, nil
	}
	if !fp.MultiGroup && o.multi {
		return exit.UsageErrorf("--from-file %s has topic,partition,offset rows, which name no group: with several groups kafka-consumer-groups.sh applies such a file to none of them, so kaasctl refuses. Give one --group, or use group,topic,partition,offset rows (what --export writes for several groups)", o.fromFile)
	}
	return nil
}

// readFromFile parses the CSV plan in name ("-": standard input), with a
// progress line on a terminal for a large one.
func readFromFile(g *Globals, name string) (repair.FilePlan, error) {
	in, closeIn, err := openFromFile(g, name)
	if err != nil {
		return repair.FilePlan{}, err
	}
	defer closeIn()
	var size int64
	if f, ok := in.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
	}
	// A plan of a million rows stays in memory: the collector at GOGC 100,
	// as for a large assignment.
	large := gctune.LargeInput(size)
	prog := g.Progress("reading "+name+" (bytes)", size)
	fp, err := repair.ParseResetCSV(safefs.CappedReader(progressReader{in, prog}, name, 0), name)
	prog.Done()
	if large {
		gctune.InputRead()
	}
	if err != nil {
		return repair.FilePlan{}, exit.UsageErrorf("--from-file: %v", err)
	}
	return fp, nil
}

// openFromFile opens --from-file FILE: "-" is standard input (a pipe is
// the documented way to stream a plan); a named file must be a regular
// file, opened without blocking, so a FIFO is refused at once instead of
// hanging in open.
func openFromFile(g *Globals, name string) (io.Reader, func(), error) {
	if name == "-" {
		return g.IO.In, func() {}, nil
	}
	fh, _, err := safefs.OpenFollow(name)
	if err != nil {
		var ke *safefs.KindError
		if errors.As(err, &ke) {
			return nil, nil, exit.UsageErrorf("--from-file %s: %s (use --from-file - to read a pipe on standard input)", name, safefs.Problem(err))
		}
		return nil, nil, exit.UsageErrorf("--from-file: %v", err)
	}
	return fh, func() { fh.Close() }, nil
}

// progressReader counts what is read on a progress line.
type progressReader struct {
	r    io.Reader
	prog *render.Progress
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.prog.Add(int64(n))
	return n, err
}
