package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestJSONDocWriterMatchesWriteJSON: a document streamed element by element
// is byte for byte what WriteJSON writes for the whole value, empty array,
// nil slices and ids that are not UTF-8 included.
func TestJSONDocWriterMatchesWriteJSON(t *testing.T) {
	t.Parallel()
	type row struct {
		Group  string   `json:"group"`
		Issues []string `json:"issues"`
		N      int      `json:"n"`
	}
	type head struct {
		Sources map[string]any `json:"sources"`
		Total   int            `json:"total"`
	}
	type doc struct {
		Sources map[string]any `json:"sources"`
		Total   int            `json:"total"`
		Groups  []row          `json:"groups"`
	}
	for name, rows := range map[string][]row{
		"empty":   {},
		"one":     {{Group: "g", Issues: []string{"a"}, N: 1}},
		"several": {{Group: "a<b>&"}, {Group: "b", Issues: []string{}}, {Group: "c\u202e", N: -2}},
		"notUTF8": {{Group: "ok"}, {Group: "bad\xff"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := head{Sources: map[string]any{"path": "/data", "nested": map[string]int{"x": 1}}, Total: len(rows)}
			var want bytes.Buffer
			if err := WriteJSON(&want, doc{Sources: h.Sources, Total: h.Total, Groups: rows}, true); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			d, err := NewJSONDocWriter(&got, &h, "groups")
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if err := d.Add(&rows[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("streamed document differs\n got: %s\nwant: %s", got.String(), want.String())
			}
		})
	}
}

func TestJSONDocWriterEmptyHead(t *testing.T) {
	t.Parallel()
	var got bytes.Buffer
	d, err := NewJSONDocWriter(&got, struct{}{}, "items")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add(1); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if want := "{\n  \"items\": [\n    1\n  ]\n}\n"; got.String() != want {
		t.Fatalf("got %q, want %q", got.String(), want)
	}
	if _, err := NewJSONDocWriter(&got, []int{1}, "items"); err == nil || !strings.Contains(err.Error(), "not an object") {
		t.Fatalf("a head that is not an object: err = %v", err)
	}
}
