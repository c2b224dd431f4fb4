package render

import (
	"runtime"
	"slices"
	"strconv"
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
