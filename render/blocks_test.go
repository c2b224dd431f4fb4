package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Blocks on every core writes what writing the blocks in turn writes, in
// order, tables included; a failing block stops it after the blocks
// before it.
func TestBlocksInOrder(t *testing.T) {
	t.Parallel()
	block := func(i int, bp *Printer) error {
		fmt.Fprintf(bp.Out, "GROUP g%05d\n", i)
		tb := NewTable("TOPIC", "PARTITION")
		for k := range i % 4 {
			tb.Add("orders", fmt.Sprint(k))
		}
		return bp.Table(tb)
	}
	for _, n := range []int{0, 1, 2*blocksPerCore - 1, 2 * blocksPerCore, blocksChunk + 3, 3*blocksChunk + 1} {
		var want, got bytes.Buffer
		seq := &Printer{Out: &want}
		for i := range n {
			if err := block(i, seq); err != nil {
				t.Fatal(err)
			}
		}
		if err := (&Printer{Out: &got}).Blocks(n, block); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%d blocks: output differs from writing them in turn (%d bytes, want %d)", n, got.Len(), want.Len())
		}
	}

	boom := errors.New("boom")
	var out bytes.Buffer
	err := (&Printer{Out: &out}).Blocks(2*blocksChunk, func(i int, bp *Printer) error {
		if i == blocksChunk+7 {
			return boom
		}
		fmt.Fprintf(bp.Out, "b%d\n", i)
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the failing block's", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != blocksChunk+7 || lines[len(lines)-1] != fmt.Sprintf("b%d", blocksChunk+6) {
		t.Errorf("wrote %d blocks before the failing one (last %q), want %d", len(lines), lines[len(lines)-1], blocksChunk+7)
	}
}
