package render

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Add keeps each row's cells apart although rows share blocks: across a
// block boundary, missing cells blank, extra cells dropped, and growing one
// row never writes into the next.
func TestTableAddRowsStayApart(t *testing.T) {
	t.Parallel()
	tb := NewTable("A", "B", "C+")
	n := 2*tableBlock + 3
	for i := range n {
		switch i % 3 {
		case 0:
			tb.Add(strconv.Itoa(i), "b", "c")
		case 1:
			tb.Add(strconv.Itoa(i)) // short: B and C blank
		default:
			tb.Add(strconv.Itoa(i), "b", "c", "dropped")
		}
	}
	for i := range tb.Rows {
		tb.Rows[i] = append(tb.Rows[i], "grown")
	}
	for i, row := range tb.Rows {
		want := []string{strconv.Itoa(i), "b", "c", "grown"}
		if i%3 == 1 {
			want = []string{strconv.Itoa(i), "", "", "grown"}
		}
		if !slices.Equal(row, want) {
			t.Fatalf("row %d = %q, want %q", i, row, want)
		}
	}
	if len(tb.Rows) != n {
		t.Fatalf("%d rows, want %d", len(tb.Rows), n)
	}
}

// A small table allocates for its own rows, not for a block of
// tableBlock: describe --all makes two small tables per group, and 256-row
// blocks for each cost a 10,000-group describe twice its CPU.
func TestTableAddSmallTableAllocatesLittle(t *testing.T) {
	// Not parallel: the bytes are read from the runtime's totals.
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		tb := NewTable("A", "B", "C", "D", "E", "F", "G", "H")
		for range 3 {
			tb.Add("a", "b", "c", "d", "e", "f", "g", "h")
		}
	}
	runtime.ReadMemStats(&after)
	if got := (after.TotalAlloc - before.TotalAlloc) / runs; got > 2048 {
		t.Errorf("a 3-row, 8-column table allocates %d bytes, want at most 2048", got)
	}
}

// A large table is written on several cores with the bytes one core
// writes: widths over every row, cells cleaned, the last column unpadded,
// wide-only columns shown or not.
func TestWriteAlignedParallelIsSequential(t *testing.T) {
	t.Parallel()
	tb := NewTable("GROUP", "STATE", "NOTE", "EXTRA+")
	n := 5*alignedChunk + 17
	for i := range n {
		note := ""
		switch i % 5 {
		case 1:
			note = "ünïcode ✓"
		case 2:
			note = "tab\there"
		case 3:
			note = strings.Repeat("w", i%97)
		}
		tb.Add("group-"+strconv.Itoa(i*7919%100003), []string{"Empty", "Stable", ""}[i%3], note, strconv.Itoa(i))
	}
	for _, wide := range []bool{false, true} {
		var seq, par bytes.Buffer
		keep := func() ([]int, []int) {
			var keep, widths []int
			for i, c := range tb.Columns {
				if wide || !c.Wide {
					keep = append(keep, i)
					_, w := plainCell(c.Header)
					widths = append(widths, w)
				}
			}
			return keep, widths
		}
		k, w := keep()
		columnWidths(tb.Rows, k, w)
		seq.Write(appendAlignedRow(nil, func(i int) string { return tb.Columns[i].Header }, k, w))
		for _, row := range tb.Rows {
			seq.Write(appendAlignedRow(nil, func(i int) string { return row[i] }, k, w))
		}
		k, w = keep()
		if err := writeAlignedOn(&par, tb, k, w, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(seq.Bytes(), par.Bytes()) {
			t.Fatalf("wide=%v: %d bytes on three workers differ from %d on one", wide, par.Len(), seq.Len())
		}
		var viaPrinter bytes.Buffer
		if err := writeAligned(&viaPrinter, tb, wide); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(seq.Bytes(), viaPrinter.Bytes()) {
			t.Fatalf("wide=%v: writeAligned differs from one worker", wide)
		}
	}
}

// AddRows fills rows on several cores as Add adds them one by one, each
// row capped at its own cells.
func TestAddRowsIsAdd(t *testing.T) {
	t.Parallel()
	n := 3*alignedChunk + 5
	cell := func(i, j int) string { return strconv.Itoa(i*31+j) + strings.Repeat("x", i%3) }
	one, many := NewTable("A", "B", "C+"), NewTable("A", "B", "C+")
	one.Add("first", "row")
	many.Add("first", "row")
	for i := range n {
		one.Add(cell(i, 0), cell(i, 1), cell(i, 2))
	}
	many.AddRows(n, func(i int, c []string) {
		for j := range c {
			c[j] = cell(i, j)
		}
	})
	if len(many.Rows) != n+1 {
		t.Fatalf("%d rows, want %d", len(many.Rows), n+1)
	}
	for i := range one.Rows {
		if !slices.Equal(one.Rows[i], many.Rows[i]) || cap(many.Rows[i]) != 3 {
			t.Fatalf("row %d: AddRows %q (cap %d), Add %q", i, many.Rows[i], cap(many.Rows[i]), one.Rows[i])
		}
	}
}
