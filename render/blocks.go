package render

import (
	"bytes"
	"runtime"

	"github.com/kaasctl/kaasctl/internal/parallel"
)

// blocksChunk is how many blocks Blocks renders at once before writing
// them: a 10,000-group describe holds a few hundred kilobytes of text at a
// time, never the whole output.
const blocksChunk = 512

// blocksPerCore is the fewest blocks a core renders: under two cores'
// worth, Blocks writes them in turn, straight to the printer.
const blocksPerCore = 32

// Blocks writes n blocks of people's text in order: block(i, bp) writes
// block i to bp, a printer like p. Many blocks are rendered on every core,
// a chunk at a time, each into its own buffer, and the buffers written to
// p in order, so the output is what writing them in turn gives. At the
// first block that fails, the blocks before it are written and its error
// returned.
func (p *Printer) Blocks(n int, block func(i int, bp *Printer) error) error {
	workers := min(runtime.GOMAXPROCS(0), n/blocksPerCore)
	if workers <= 1 {
		for i := range n {
			if err := block(i, p); err != nil {
				return err
			}
		}
		return nil
	}
	bufs := make([]bytes.Buffer, min(n, blocksChunk))
	errs := make([]error, len(bufs))
	for lo := 0; lo < n; lo += blocksChunk {
		m := min(blocksChunk, n-lo)
		parallel.ForRanges(m, workers, func(_, from, to int) {
			for j := from; j < to; j++ {
				bp := *p
				bp.Out = &bufs[j]
				if errs[j] = block(lo+j, &bp); errs[j] != nil {
					return
				}
			}
		})
		for j := range m {
			if errs[j] != nil {
				return errs[j]
			}
			if _, err := p.Out.Write(bufs[j].Bytes()); err != nil {
				return err
			}
			bufs[j].Reset()
		}
	}
	return nil
}
