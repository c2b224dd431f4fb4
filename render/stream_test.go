package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

type streamItem struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func writeItems(t *testing.T, f Format, items []streamItem) string {
	t.Helper()
	var b bytes.Buffer
	s := NewStream(&b, f, []string{"NAME", "N", "EXTRA+"}, "title")
	for _, it := range items {
		err := s.Item(func(dst []byte) []byte {
			return append(dst, `{"name":"`+it.Name+`","n":`+strconv.Itoa(it.N)+`}`...)
		}, it, func() []string { return []string{it.Name, strconv.Itoa(it.N), ""} })
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Count() != len(items) {
		t.Errorf("count %d, want %d", s.Count(), len(items))
	}
	return b.String()
}

func TestStreamFormats(t *testing.T) {
	t.Parallel()
	items := []streamItem{{"a", 1}, {"b\x1b", 22}}
	for f, want := range map[Format]string{
		JSON:  "[\n{\"schemaVersion\":1,\"name\":\"a\",\"n\":1},\n{\"schemaVersion\":1,\"name\":\"b\x1b\",\"n\":22}\n]\n",
		JSONL: "{\"schemaVersion\":1,\"name\":\"a\",\"n\":1}\n{\"schemaVersion\":1,\"name\":\"b\x1b\",\"n\":22}\n",
		CSV:   "NAME,N,EXTRA\na,1,\nb\x1b,22,\n",
		Table: "title\nNAME   N\na      1\nb\\x1b  22\n",
		Wide:  "title\nNAME   N   EXTRA\na      1   -\nb\\x1b  22  -\n",
	} {
		if got := writeItems(t, f, items); got != want {
			t.Errorf("%s: got\n%q\nwant\n%q", f, got, want)
		}
	}
	if got := writeItems(t, JSON, nil); got != "[\n]\n" {
		t.Errorf("empty json: %q", got)
	}
	if got := writeItems(t, YAML, nil); got != "[]\n" {
		t.Errorf("empty yaml: %q", got)
	}
}

func TestStreamEventsAndLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := NewStream(&b, CSV, []string{"A", "B"}, "")
	if err := s.Event(streamItem{"x", 1}, []string{"1", "2"}, []string{"3", "4"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil || b.String() != "A,B\n1,2\n3,4\n" {
		t.Fatalf("csv events: %q %v", b.String(), err)
	}
	b.Reset()
	s = NewStream(&b, JSONL, nil, "")
	s.Event(streamItem{"x", 1})
	if err := s.Flush(); err != nil || b.String() != "{\"schemaVersion\":1,\"name\":\"x\",\"n\":1}\n" {
		t.Fatalf("jsonl event: %q %v", b.String(), err)
	}
	b.Reset()
	p := &Printer{Color: true}
	s = NewStream(&b, Table, nil, "")
	s.Lines(p.Paint(Red, "moved")+" g\x1b[2J", "second")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "\x1b[31mmoved\x1b[0m") || strings.Contains(got, "\x1b[2J") || !strings.HasSuffix(got, "second\n") {
		t.Fatalf("human lines: %q", got)
	}
}

// A failed write is reported by the call that meets it and every later one.
func TestStreamWriteErrors(t *testing.T) {
	t.Parallel()
	item := func(s *Stream) error {
		return s.Item(func(d []byte) []byte { return append(d, "{}"...) }, streamItem{}, func() []string { return []string{"a", "1"} })
	}
	for _, f := range []Format{JSON, JSONL, YAML, CSV, Table} {
		s := NewStream(&failWriter{}, f, []string{"NAME", "N"}, "title")
		if err := item(s); err != nil {
			t.Fatalf("%s: buffered, nothing written yet: %v", f, err)
		}
		if err := s.Flush(); err == nil {
			t.Errorf("%s: a failed flush was not reported", f)
		}
		if err := item(s); err == nil {
			t.Errorf("%s: Item after a failed write reported nothing", f)
		}
		if err := s.Event(streamItem{}, []string{"a", "1"}); err == nil {
			t.Errorf("%s: Event after a failed write reported nothing", f)
		}
		if err := s.Close(); err == nil {
			t.Errorf("%s: Close after a failed write reported nothing", f)
		}
	}
}
