package render

import (
	"bytes"
	"testing"
)

type streamedRow struct {
	Group string   `json:"group"`
	Tags  []string `json:"tags"`
	N     *int64   `json:"n"`
}

type streamedDoc struct {
	Command string         `json:"command"`
	Groups  []*streamedRow `json:"groups"`
	Notes   []string       `json:"notes,omitempty"`
	Summary struct {
		Groups int `json:"groups"`
	} `json:"summary"`
	hidden int
}

// WriteJSONStreamed writes WriteJSON's bytes: empty, one and many
// elements, nil slices inside them, ids that are not UTF-8.
func TestWriteJSONStreamedIsWriteJSON(t *testing.T) {
	t.Parallel()
	n := int64(7)
	for _, groups := range [][]*streamedRow{
		nil,
		{},
		{{Group: "a", N: &n}},
		{{Group: "a", Tags: []string{"x", "y"}}, {Group: "bad\xff", Tags: []string{"\xfe"}}, nil, {Group: `q"uote</>`}},
	} {
		d := &streamedDoc{Command: "reset", Groups: groups, hidden: 1}
		d.Summary.Groups = len(groups)
		var want, got bytes.Buffer
		if err := WriteJSON(&want, d, true); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSONStreamed(&got, d, "groups"); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d groups:\nstreamed:\n%s\nWriteJSON:\n%s", len(groups), got.String(), want.String())
		}
	}
}
