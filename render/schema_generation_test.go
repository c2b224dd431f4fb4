package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type genView struct {
	N int `json:"n"`
}

type genOwn struct {
	Generation string `json:"generation"`
}

type genFree struct {
	V string `json:"v"`
}

type genUnregistered struct {
	N int `json:"n"`
}

func init() {
	RegisterSchema(genView{}, 2)
	RegisterSchema(genOwn{}, 1)
	RegisterSchema(genFree{}, 1)
	RegisterGenerationFree(genFree{})
}

type genInfo struct {
	Name   string `json:"generation"`
	Source string `json:"source"`
}

// A registered document about a volume or cluster carries the Printer's
// generation right after schemaVersion, in every form a Printer writes
// (json, an array's elements, jsonl, yaml, a document written element by
// element, a stream's items); one declaring its own generation, one
// registered generation-free, an unregistered one and a Printer without a
// generation carry none. Every output is valid with each key once.
func TestGenerationInEveryDocument(t *testing.T) {
	t.Parallel()
	gen := func() any { return &genInfo{Name: "0.2.18", Source: "pinned"} }
	print := func(p *Printer, f Format, data any) string {
		var b bytes.Buffer
		p.Format, p.Out = f, &b
		if err := p.Print(Output{Data: data}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	p := &Printer{Generation: gen}
	const g = `"generation": {
    "generation": "0.2.18",
    "source": "pinned"
  }`
	if got := print(p, JSON, genView{N: 3}); got != "{\n  \"schemaVersion\": 2,\n  "+g+",\n  \"n\": 3\n}\n" {
		t.Errorf("json: %q", got)
	}
	if got := print(p, JSONL, []genView{{1}, {2}}); got != `{"schemaVersion":2,"generation":{"generation":"0.2.18","source":"pinned"},"n":1}`+"\n"+`{"schemaVersion":2,"generation":{"generation":"0.2.18","source":"pinned"},"n":2}`+"\n" {
		t.Errorf("jsonl: %q", got)
	}
	arr := print(p, JSON, []genView{{1}})
	var elems []map[string]any
	if err := json.Unmarshal([]byte(arr), &elems); err != nil || len(elems) != 1 || elems[0]["generation"] == nil || !strings.Contains(arr, "    \"generation\": {\n      \"generation\": \"0.2.18\",") {
		t.Errorf("array %v: %s", err, arr)
	}
	if got := print(p, YAML, genView{N: 1}); !strings.HasPrefix(got, "schemaVersion: 2\ngeneration:\n  generation: 0.2.18\n  source: pinned\nn: 1") {
		t.Errorf("yaml: %q", got)
	}
	for name, doc := range map[string]any{"own": genOwn{Generation: "mine"}, "free": genFree{V: "x"}, "unregistered": genUnregistered{N: 1}} {
		got := print(p, JSON, doc)
		if strings.Count(got, `"generation"`) > 1 || name != "own" && strings.Contains(got, `"generation"`) {
			t.Errorf("%s: %s", name, got)
		}
	}
	if got := print(&Printer{}, JSON, genView{N: 1}); strings.Contains(got, "generation") {
		t.Errorf("no generation given: %s", got)
	}
	var b bytes.Buffer
	p.Out = &b
	d, err := p.JSONDoc(genView{}, genView{N: 1}, "items")
	if err != nil {
		t.Fatal(err)
	}
	d.Add(genView{N: 2})
	d.Close()
	var whole map[string]any
	if err := json.Unmarshal(b.Bytes(), &whole); err != nil || !strings.HasPrefix(b.String(), "{\n  \"schemaVersion\": 2,\n  "+g+",\n") {
		t.Errorf("document element by element %v: %q", err, b.String())
	}
	b.Reset()
	if err := p.PrintStreamed(genView{N: 4}, "none"); err != nil || !strings.HasPrefix(b.String(), "{\n  \"schemaVersion\": 2,\n  "+g+",\n") {
		t.Errorf("streamed %v: %q", err, b.String())
	}
	b.Reset()
	s := NewStream(&b, JSONL, []string{"N"}, "").WithGeneration(p)
	for i := range 2 {
		v := genView{N: i}
		s.Item(func(dst []byte) []byte { out, _ := json.Marshal(v); return append(dst, out...) }, v, func() []string { return []string{"x"} })
	}
	s.Close()
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["generation"] == nil || m["schemaVersion"] != 2.0 {
			t.Errorf("stream item %v: %s", err, line)
		}
	}
}
