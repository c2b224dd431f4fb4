package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type schemaDoc struct {
	Group  string   `json:"group"`
	Issues []string `json:"issues"`
}

type schemaEmpty struct{}

type schemaRegistered struct {
	N int `json:"n"`
}

func init() { RegisterSchema(schemaRegistered{}, 7) }

// Every document a Printer prints carries its schema version first: an
// object in json and yaml, each element of an array document, each jsonl
// line and stream item; the rest of the document is byte for byte what
// WriteJSON writes.
func TestSchemaVersionInEveryDocument(t *testing.T) {
	t.Parallel()
	print := func(f Format, data any) string {
		var b bytes.Buffer
		if err := (&Printer{Format: f, Out: &b}).Print(Output{Data: data}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	doc := schemaDoc{Group: "g\xff", Issues: nil}
	var plain bytes.Buffer
	WriteJSON(&plain, doc, true)
	want := strings.Replace(plain.String(), "{\n", "{\n  \"schemaVersion\": 1,\n", 1)
	if got := print(JSON, doc); got != want {
		t.Errorf("json: got\n%s\nwant\n%s", got, want)
	}
	if got := print(JSON, &schemaRegistered{N: 2}); got != "{\n  \"schemaVersion\": 7,\n  \"n\": 2\n}\n" {
		t.Errorf("registered version: %q", got)
	}
	if got := print(JSON, schemaEmpty{}); got != "{\n  \"schemaVersion\": 1\n}\n" {
		t.Errorf("empty object: %q", got)
	}
	if got := print(JSON, []schemaRegistered{}); got != "[]\n" {
		t.Errorf("empty array: %q", got)
	}
	if got := print(JSON, []schemaRegistered{{1}, {2}}); got != "[\n  {\n    \"schemaVersion\": 7,\n    \"n\": 1\n  },\n  {\n    \"schemaVersion\": 7,\n    \"n\": 2\n  }\n]\n" {
		t.Errorf("array: %q", got)
	}
	if got := print(JSONL, []schemaRegistered{{1}, {2}}); got != "{\"schemaVersion\":7,\"n\":1}\n{\"schemaVersion\":7,\"n\":2}\n" {
		t.Errorf("jsonl: %q", got)
	}
	if got := print(YAML, doc); !strings.HasPrefix(got, "schemaVersion: 1\ngroup:") {
		t.Errorf("yaml: %q", got)
	}
	if got := print(JSON, []string{"a"}); got != "[\n  \"a\"\n]\n" {
		t.Errorf("an array of strings is unchanged: %q", got)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(print(JSON, doc)), &v); err != nil || v[SchemaVersionField] != 1.0 || v["groupBase64"] == nil {
		t.Errorf("decoded %v %v", v, err)
	}
}

// The documents written element by element carry it too, and are
// otherwise what WriteJSON writes.
func TestSchemaVersionStreamedDocuments(t *testing.T) {
	t.Parallel()
	type big struct {
		Total  int         `json:"total"`
		Groups []schemaDoc `json:"groups"`
	}
	v := big{Total: 2, Groups: []schemaDoc{{Group: "a"}, {Group: "b", Issues: []string{"x"}}}}
	var plain, got bytes.Buffer
	WriteJSON(&plain, v, true)
	want := strings.Replace(plain.String(), "{\n", "{\n  \"schemaVersion\": 1,\n", 1)
	p := &Printer{Format: JSON, Out: &got}
	if err := p.PrintStreamed(&v, "groups"); err != nil || got.String() != want {
		t.Errorf("PrintStreamed: %v\n%s\nwant\n%s", err, got.String(), want)
	}
	got.Reset()
	head := struct {
		Total int `json:"total"`
	}{2}
	d, err := p.JSONDoc(big{}, &head, "groups")
	if err != nil {
		t.Fatal(err)
	}
	for i := range v.Groups {
		d.Add(&v.Groups[i])
	}
	if err := d.Close(); err != nil || got.String() != want {
		t.Errorf("JSONDoc: %v\n%s\nwant\n%s", err, got.String(), want)
	}
	got.Reset()
	jw := p.JSONLines(schemaRegistered{})
	jw.Write(schemaDoc{Group: "a"})
	jw.Flush()
	if got.String() != "{\"schemaVersion\":7,\"group\":\"a\",\"issues\":[]}\n" {
		t.Errorf("JSONLines: %q", got.String())
	}
}

// The splice works whatever the writes' boundaries.
func TestVersionWriterSplitWrites(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"{\n  \"a\": 1\n}\n", "{}\n", "  [1]", "{\"a\":{}}"} {
		var whole, split bytes.Buffer
		newVersionWriter(&whole, 3, "", "  ").Write([]byte(in))
		w := newVersionWriter(&split, 3, "", "  ")
		for i := range len(in) {
			w.Write([]byte{in[i]})
		}
		if whole.String() != split.String() {
			t.Errorf("%q: whole %q, byte by byte %q", in, whole.String(), split.String())
		}
	}
}

func TestAppendVersionedObject(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":1}`: `pre{"schemaVersion":2,"a":1}`,
		`{}`:      `pre{"schemaVersion":2}`,
		`[1]`:     `pre[1]`,
		``:        `pre`,
	} {
		got := appendVersionedObject([]byte("pre"), 2, func(d []byte) []byte { return append(d, in...) })
		if string(got) != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// FuzzVersionWriter: any JSON document through the splice is still valid
// JSON; an object gets schemaVersion and keeps every member as it was;
// anything else passes unchanged.
func FuzzVersionWriter(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, "{\n  \"a\": [1, {}]\n}\n", `[{"a":1}]`, `"s"`, `  {"k":"}"}`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		for _, step := range []string{"", "  "} {
			var out bytes.Buffer
			newVersionWriter(&out, 4, "", step).Write([]byte(doc))
			var before, after any
			json.Unmarshal([]byte(doc), &before)
			if err := json.Unmarshal(out.Bytes(), &after); err != nil {
				t.Fatalf("%q became %q: %v", doc, out.String(), err)
			}
			obj, isObj := before.(map[string]any)
			if !isObj {
				if out.String() != doc {
					t.Fatalf("%q changed to %q", doc, out.String())
				}
				continue
			}
			got := after.(map[string]any)
			if got[SchemaVersionField] != 4.0 {
				t.Fatalf("%q: no schemaVersion in %q", doc, out.String())
			}
			for k, v := range obj {
				if k != SchemaVersionField {
					if a, b := jsonOf(v), jsonOf(got[k]); a != b {
						t.Fatalf("%q: member %q changed: %s → %s", doc, k, a, b)
					}
				}
			}
		}
	})
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
