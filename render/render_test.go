package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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

func sample() Output {
	t := NewTable("GROUP", "COORDINATOR", "FNV+")
	t.Add("orders", "kaas-0", "0x1")
	t.Add("billing", "", "0x2")
	return Output{Data: []map[string]string{{"group": "orders"}, {"group": "billing"}}, Table: t}
}

func TestFormats(t *testing.T) {
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
		{JSON, false, []string{"[\n  {\n    \"group\": \"orders\"\n  },"}, nil},
		{JSONL, false, []string{"{\"group\":\"orders\"}\n{\"group\":\"billing\"}\n"}, nil},
		{YAML, false, []string{"- group: orders\n- group: billing\n"}, nil},
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
