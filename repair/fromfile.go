package repair

import (
	"errors"
	"io"
	"io/fs"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/render"
)

// ReadFromFile parses the --from-file CSV plan in name ("-": stdin),
// with a progress line (progress) for a large one.
func ReadFromFile(name string, stdin io.Reader, progress func(label string, total int64) *render.Progress) (FilePlan, error) {
	in, closeIn, err := openFromFile(name, stdin)
	if err != nil {
		return FilePlan{}, err
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
	prog := progress("reading "+name+" (bytes)", size)
	fp, err := ParseResetCSV(safefs.CappedReader(progressReader{in, prog}, name, 0), name)
	prog.Done()
	if large {
		gctune.InputRead()
	}
	if err != nil {
		return FilePlan{}, exit.UsageErrorf("--from-file: %v", err)
	}
	return fp, nil
}

// openFromFile opens --from-file FILE: "-" is standard input (a pipe is
// the documented way to stream a plan); a named file must be a regular
// file, opened without blocking, so a FIFO is refused at once instead of
// hanging in open.
func openFromFile(name string, stdin io.Reader) (io.Reader, func(), error) {
	if name == "-" {
		return stdin, func() {}, nil
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
