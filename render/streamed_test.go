package render

import (
	"bytes"
	"fmt"
	"strings"
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

// countingWriter counts the writes it is given.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// A document of several hundred kilobytes reaches the writer in pieces as
// it is encoded (WriteJSON hands it over in one write, whole), with
// WriteJSON's bytes; a name that is no slice field falls back to it.
func TestWriteJSONStreamedStreams(t *testing.T) {
	t.Parallel()
	d := &streamedDoc{Command: "reset"}
	for i := range 3000 {
		d.Groups = append(d.Groups, &streamedRow{Group: fmt.Sprintf("group-%06d-%s", i, strings.Repeat("x", 100))})
	}
	var want bytes.Buffer
	if err := WriteJSON(&want, d, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field    string
		streamed bool
	}{{"groups", true}, {"command", false}, {"nosuch", false}} {
		var got countingWriter
		if err := WriteJSONStreamed(&got, d, c.field); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("field %q: bytes differ from WriteJSON's", c.field)
		}
		if streamed := got.writes > 1; streamed != c.streamed {
			t.Errorf("field %q: %d writes of %d bytes, want streamed %v", c.field, got.writes, got.Len(), c.streamed)
		}
	}
}
