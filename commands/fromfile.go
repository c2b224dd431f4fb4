package commands

import (
	"errors"
	"github.com/kaasctl/kaasctl/render"
	"io"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
)

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
