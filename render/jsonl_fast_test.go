package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// jsonlRow has what the fast path must leave to the general one: slices
// and maps that may be nil, pointers, strings that may not be UTF-8, and
// a value with its own MarshalJSON.
type jsonlRow struct {
	Group   string            `json:"group"`
	Issues  []string          `json:"issues"`
	Files   []string          `json:"files,omitempty"`
	Meta    map[string]string `json:"meta"`
	Lag     *int64            `json:"lag,omitempty"`
	Nested  []jsonlRow        `json:"nested,omitempty"`
	Custom  jsonlCustom       `json:"custom"`
	Skipped string            `json:"-"`
}

type jsonlCustom struct{ s string }

func (c jsonlCustom) MarshalJSON() ([]byte, error) { return json.Marshal("c:" + c.s) }

// jsonlValues are values the fast paths must write as the general one:
// some it takes, some it must leave to NoNulls and lossless.
func jsonlValues() []any {
	lag := int64(7)
	return []any{
		&jsonlRow{Group: "g", Issues: []string{"a"}, Meta: map[string]string{"k": "v"}},
		&jsonlRow{Group: "g"}, // nil slice and map: null without NoNulls
		&jsonlRow{Group: "bad\xffid", Issues: []string{}, Meta: map[string]string{}},
		&jsonlRow{Group: "ok", Issues: []string{"x\xfe"}, Meta: map[string]string{}},
		&jsonlRow{Group: `has \ufffd text and null`, Issues: []string{}, Meta: map[string]string{}},
		&jsonlRow{Group: "real \uFFFD rune", Issues: []string{}, Meta: map[string]string{"\xff": "key not UTF-8"}},
		&jsonlRow{Group: "p", Issues: []string{}, Meta: map[string]string{}, Lag: &lag, Nested: []jsonlRow{{Group: "n"}}},
		&jsonlRow{Group: "s", Issues: []string{}, Meta: map[string]string{}, Custom: jsonlCustom{"\xff"}, Skipped: "\xff"},
		struct{}{},
		[]int{1, 2},
		"a string",
		nil,
	}
}

// TestJSONLFastLineIsTheGeneralLine: every line the JSONL writer writes is
// byte for byte what NoNulls and lossless would have made of it, with and
// without a stamp, for values the fast path takes and values it must not.
func TestJSONLFastLineIsTheGeneralLine(t *testing.T) {
	t.Parallel()
	values := jsonlValues()
	stamps := []stamp{{}, {version: 3}, {version: 2, gen: []byte(`{"generation":"go","label":"Go"}`)}}
	for si, st := range stamps {
		for vi, v := range values {
			var fast, general bytes.Buffer
			fw, gw := NewJSONLWriter(&fast), NewJSONLWriter(&general)
			fw.stamp, gw.stamp = st, st
			for range 2 { // the second line reuses the writer's buffers
				if err := fw.Write(v); err != nil {
					t.Fatal(err)
				}
				if err := gw.generalLine(v); err != nil {
					t.Fatal(err)
				}
			}
			fw.Flush()
			gw.Flush()
			if fast.String() != general.String() {
				t.Errorf("stamp %d, value %d (%s):\nwrote   %s\ngeneral %s", si, vi, fmt.Sprintf("%T", v), fast.String(), general.String())
			}
		}
	}
}

// TestJSONDocAddIsWriteJSON: each element a streamed document adds is what
// writeJSON makes of it, nested in the document's array.
func TestJSONDocAddIsWriteJSON(t *testing.T) {
	t.Parallel()
	for vi, v := range jsonlValues() {
		var got bytes.Buffer
		d, err := NewJSONDocWriter(&got, struct{}{}, "items")
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		want.WriteString("{\n  \"items\": [")
		for i := range 2 {
			if err := d.Add(v); err != nil {
				t.Fatal(err)
			}
			var el bytes.Buffer
			if err := writeJSON(&el, v, "    ", "  "); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				want.WriteByte(',')
			}
			want.WriteString("\n    ")
			want.Write(bytes.TrimRight(el.Bytes(), "\n"))
		}
		want.WriteString("\n  ]\n}\n")
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("value %d (%T):\nwrote %s\nwant  %s", vi, v, got.String(), want.String())
		}
	}
}

// A write error stops the stream at the next line, as before.
func TestJSONLWriteErrorIsReturned(t *testing.T) {
	t.Parallel()
	w := NewJSONLWriter(failingWriter{})
	w.stamp = stamp{version: 1}
	big := &jsonlRow{Group: string(bytes.Repeat([]byte("x"), 70<<10)), Issues: []string{}, Meta: map[string]string{}}
	if err := w.Write(big); err == nil {
		t.Fatal("a line larger than the buffer written to a failing writer gave no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("broken pipe") }
