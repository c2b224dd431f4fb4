package render

import (
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
