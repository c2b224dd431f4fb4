package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"
)

type inner struct {
	Names []string       `json:"names"`
	Tags  map[string]int `json:"tags"`
}

type view struct {
	Key    string   `json:"key"`
	List   []inner  `json:"list"`
	Ptr    *inner   `json:"ptr"`
	Empty  []string `json:"empty"`
	hidden []int
}

func TestNoNulls(t *testing.T) {
	t.Parallel()
	v := view{Key: "k", List: []inner{{}}, Ptr: &inner{}, hidden: nil}
	var b bytes.Buffer
	if err := WriteJSON(&b, v, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null") {
		t.Fatalf("null in output: %s", b.String())
	}
	want := `{"key":"k","list":[{"names":[],"tags":{}}],"ptr":{"names":[],"tags":{}},"empty":[]}`
	if strings.TrimSpace(b.String()) != want {
		t.Errorf("got %s\nwant %s", b.String(), want)
	}
	if v.List[0].Names != nil {
		t.Error("NoNulls modified its input")
	}
	b.Reset()
	WriteJSON(&b, []view(nil), false)
	if strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("nil slice: %s", b.String())
	}
}

// A nil slice or map in an omitempty field is omitted nil or empty, so it
// does not make NoNulls copy the value (a 1,000,000-row listing would copy
// every row); a nil one without omitempty still does.
func TestNoNullsOmitEmptyUncopied(t *testing.T) {
	t.Parallel()
	type row struct {
		Group  string            `json:"group"`
		Topics []string          `json:"topics,omitempty"`
		Extra  map[string]string `json:"extra,omitempty"`
		Issues []string          `json:"issues"`
	}
	r := &row{Group: "g", Issues: []string{}}
	if got := NoNulls(r); got.(*row) != r {
		t.Error("a value whose only nil containers are omitempty was copied")
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r, false); err != nil || strings.TrimSpace(b.String()) != `{"group":"g","issues":[]}` {
		t.Fatalf("%v %s", err, b.String())
	}
	r.Issues = nil
	if got := NoNulls(r); got.(*row) == r || got.(*row).Issues == nil {
		t.Error("a nil slice without omitempty was not replaced")
	}
}

func sample() Output {
	t := NewTable("GROUP", "COORDINATOR", "FNV+")
	t.Add("orders", "kaas-0", "0x1")
	t.Add("billing", "", "0x2")
	return Output{Data: []map[string]string{{"group": "orders"}, {"group": "billing"}}, Table: t}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    Format
		tty  bool
		want []string
		not  []string
	}{
		{Table, false, []string{"GROUP    COORDINATOR\n", "billing  -\n"}, []string{"FNV", "│"}},
		{Table, true, []string{"│", "GROUP", "orders"}, []string{"FNV"}},
		{Wide, false, []string{"GROUP    COORDINATOR  FNV\n", "0x2"}, nil},
		{CSV, false, []string{"GROUP,COORDINATOR,FNV\n", "billing,,0x2\n"}, nil},
		{JSON, false, []string{"[\n  {\n    \"schemaVersion\": 1,\n    \"group\": \"orders\"\n  },"}, nil},
		{JSONL, false, []string{"{\"schemaVersion\":1,\"group\":\"orders\"}\n{\"schemaVersion\":1,\"group\":\"billing\"}\n"}, nil},
		{YAML, false, []string{"- schemaVersion: 1\n  group: orders\n- schemaVersion: 1\n  group: billing\n"}, nil},
	} {
		var b bytes.Buffer
		p := &Printer{Format: tc.f, Out: &b, TTY: tc.tty}
		if err := p.Print(sample()); err != nil {
			t.Fatalf("%s: %v", tc.f, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s tty=%v: missing %q in\n%s", tc.f, tc.tty, w, b.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s tty=%v: unexpected %q in\n%s", tc.f, tc.tty, w, b.String())
			}
		}
	}
}

func TestYAMLQuotesAmbiguousStrings(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteYAML(&b, map[string]any{"a": "0x10", "b": "true", "c": "", "d": 5}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`a: "0x10"`, `b: "true"`, `c: ""`, "d: 5"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("missing %q in %s", w, b.String())
		}
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	if f, err := ParseFormat("JSON"); err != nil || f != JSON {
		t.Errorf("JSON: %v %v", f, err)
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "table, wide, json") {
		t.Errorf("xml: %v", err)
	}
	if !JSONL.Machine() || Table.Machine() {
		t.Error("Machine()")
	}
	var v any
	var b bytes.Buffer
	(&Printer{Format: JSON, Out: &b}).Print(Output{Data: map[string]any{"x": nil}})
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Error(err)
	}
}

// tabwriterPlain is how piped tables were written before the streaming
// path: text/tabwriter, padding 2. The streaming path must match it byte
// for byte.
func tabwriterPlain(t *TableData, wide bool) string {
	hdr, rows := t.project(wide)
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, cells := range append([][]string{hdr}, rows...) {
		for i, c := range cells {
			if i > 0 {
				io.WriteString(w, "\t")
			}
			pc, _ := plainCell(c)
			io.WriteString(w, pc)
		}
		io.WriteString(w, "\n")
	}
	w.Flush()
	return b.String()
}

func TestAlignedMatchesTabwriter(t *testing.T) {
	t.Parallel()
	alphabet := []string{"", "a", "bb", "orders-app", "ünï", "日本", "\xff", "a\tb", "x\ny", "\xc3", "-", "0123456789abcdef0123456789"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		cols := 1 + rng.IntN(6)
		var hdrs []string
		for c := range cols {
			h := fmt.Sprintf("H%d", c)
			if rng.IntN(3) == 0 {
				h += "+"
			}
			hdrs = append(hdrs, h)
		}
		tb := NewTable(hdrs...)
		for range rng.IntN(20) {
			var cells []string
			for range cols {
				cells = append(cells, alphabet[rng.IntN(len(alphabet))])
			}
			tb.Add(cells...)
		}
		for _, wide := range []bool{false, true} {
			var b bytes.Buffer
			if err := writeAligned(&b, tb, wide); err != nil {
				t.Fatal(err)
			}
			if want := tabwriterPlain(tb, wide); b.String() != want {
				t.Fatalf("table %d wide=%v:\ngot\n%q\nwant\n%q", n, wide, b.String(), want)
			}
		}
	}
}

func TestLargeTableOnTerminalStreams(t *testing.T) {
	t.Parallel()
	tb := NewTable("GROUP", "STATE")
	for i := range BoxedRows + 1 {
		tb.Add(fmt.Sprintf("g-%d", i), "Empty")
	}
	var b bytes.Buffer
	p := &Printer{Format: Table, Out: &b, TTY: true}
	if err := p.Print(Output{Table: tb}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "│") || !strings.HasPrefix(b.String(), "GROUP  STATE\n") {
		t.Fatalf("a table of %d rows on a terminal is not streamed as aligned text: %.200q", BoxedRows+1, b.String())
	}
	tb.Rows = tb.Rows[:3]
	b.Reset()
	if err := p.Print(Output{Table: tb}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "│") {
		t.Fatalf("a small table on a terminal is not boxed: %q", b.String())
	}
}
