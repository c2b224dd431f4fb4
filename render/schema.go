package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
)

// Every JSON and YAML document kaasctl prints carries its schema version
// as its first field, schemaVersion: a program reading a document checks
// it, and a document whose fields change gets a new version. A document
// that is a JSON array (whois's results) carries it in each element, and
// so does every line of jsonl and every item of a stream. The Printer adds
// it where it prints (Print, PrintStreamed, JSONDoc, JSONLines, Stream);
// view types never declare it.

// SchemaVersionField is the name of the field.
const SchemaVersionField = "schemaVersion"

// DefaultSchemaVersion is the version of a document type nobody
// registered.
const DefaultSchemaVersion = 1

// schemaVersions holds each document type's version, registered from
// init functions (RegisterSchema) and only read afterwards.
var schemaVersions = map[reflect.Type]int{}

// docType is t without pointers.
func docType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// RegisterSchema records the schema version of the documents of doc's type
// (a struct, a pointer to one, or a slice of them: then its elements, as
// jsonl and streams print them one by one, get the version too unless
// registered themselves). Call it only from an init function.
func RegisterSchema(doc any, version int) {
	t := docType(reflect.TypeOf(doc))
	if t == nil {
		return
	}
	schemaVersions[t] = version
	if t.Kind() == reflect.Slice {
		if et := docType(t.Elem()); et != nil {
			if _, ok := schemaVersions[et]; !ok {
				schemaVersions[et] = version
			}
		}
	}
}

// SchemaVersionOf is the schema version of v's document type (of a
// slice's elements when the slice type is not registered).
func SchemaVersionOf(v any) int {
	t := docType(reflect.TypeOf(v))
	if n, ok := schemaVersions[t]; ok {
		return n
	}
	if t != nil && t.Kind() == reflect.Slice {
		if n, ok := schemaVersions[docType(t.Elem())]; ok {
			return n
		}
	}
	return DefaultSchemaVersion
}

// versionWriter passes a JSON document through and inserts the
// schemaVersion field at the start of its top-level object (a document
// that is not an object passes unchanged). It holds back only the
// whitespace between the object's '{' and its first field, so a document
// of any size is never copied.
type versionWriter struct {
	w io.Writer
	// field is the member to insert, with its indentation.
	field []byte
	// closeIndent ends an object that had no other field.
	closeIndent []byte
	state       int // 0 before the first byte, 1 after '{', 2 passing through
	pending     []byte
	// out is the buffer the member is written from, kept for the next
	// document (reset).
	out []byte
}

// reset makes v ready for the next document, on the same writer with the
// same member: a stream of a million lines makes one versionWriter.
func (v *versionWriter) reset() { v.state, v.pending = 0, v.pending[:0] }

// newVersionWriter inserts version into the object written to w with
// encoding/json's prefix and indent step ("" for compact output).
func newVersionWriter(w io.Writer, version int, prefix, step string) *versionWriter {
	return newStampWriter(w, stamp{version: version}, prefix, step)
}

// newStampWriter inserts the stamp's members (schemaVersion, and the
// generation when it has one) into the object written to w.
func newStampWriter(w io.Writer, st stamp, prefix, step string) *versionWriter {
	v := &versionWriter{w: w}
	if step == "" && prefix == "" {
		v.field = []byte(st.compact())
		return v
	}
	in := prefix + step
	f := "\n" + in + `"` + SchemaVersionField + `": ` + strconv.Itoa(st.version)
	if st.gen != nil {
		var g bytes.Buffer
		if json.Indent(&g, st.gen, in, step) == nil {
			f += ",\n" + in + `"` + GenerationField + `": ` + g.String()
		}
	}
	v.field = []byte(f)
	v.closeIndent = []byte("\n" + prefix)
	return v
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func (v *versionWriter) Write(p []byte) (int, error) {
	n := len(p)
	for v.state < 2 && len(p) > 0 {
		switch v.state {
		case 0:
			i := 0
			for i < len(p) && isJSONSpace(p[i]) {
				i++
			}
			if i == len(p) {
				if _, err := v.w.Write(p); err != nil {
					return 0, err
				}
				return n, nil
			}
			if p[i] != '{' {
				v.state = 2
				break
			}
			if _, err := v.w.Write(p[:i+1]); err != nil {
				return 0, err
			}
			p, v.state = p[i+1:], 1
		case 1:
			i := 0
			for i < len(p) && isJSONSpace(p[i]) {
				i++
			}
			v.pending = append(v.pending, p[:i]...)
			if i == len(p) {
				return n, nil
			}
			out := append(v.out[:0], v.field...)
			if p[i] == '}' {
				out = append(out, v.closeIndent...)
			} else {
				out = append(append(out, ','), v.pending...)
			}
			v.out = out
			if _, err := v.w.Write(out); err != nil {
				return 0, err
			}
			p, v.state, v.pending = p[i:], 2, v.pending[:0]
		}
	}
	if len(p) > 0 {
		if _, err := v.w.Write(p); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// WriteDocument writes v as WriteJSON does, with the schema version: the
// first field of an object, or of each element of a top-level slice.
func WriteDocument(w io.Writer, v any, indent bool, version int) error {
	return writeStamped(w, v, indent, stamp{version: version})
}

// writeStamped is WriteDocument with the stamp's members.
func writeStamped(w io.Writer, v any, indent bool, st stamp) error {
	step := ""
	if indent {
		step = "  "
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if !rv.IsValid() || rv.Kind() != reflect.Slice {
		return writeJSON(newStampWriter(w, st, "", step), v, "", step)
	}
	return writeVersionedArray(w, rv, step, st)
}

// writeVersionedArray writes a slice as encoding/json lays it out, each
// element an object with the stamp's members.
func writeVersionedArray(w io.Writer, rv reflect.Value, step string, st stamp) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteByte('[')
	var el bytes.Buffer
	for i := range rv.Len() {
		if i > 0 {
			bw.WriteByte(',')
		}
		if step != "" {
			bw.WriteString("\n" + step)
		}
		el.Reset()
		e := rv.Index(i)
		if e.CanAddr() {
			e = e.Addr()
		}
		if err := writeJSON(newStampWriter(&el, st, step, step), e.Interface(), step, step); err != nil {
			return err
		}
		bw.Write(bytes.TrimSuffix(el.Bytes(), []byte("\n")))
	}
	if step != "" && rv.Len() > 0 {
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// writeYAMLStamped writes v as WriteYAML does, with the stamp's members
// (the schema version, the generation) first.
func writeYAMLStamped(w io.Writer, v any, st stamp) error {
	var buf bytes.Buffer
	if err := writeStamped(&buf, v, false, st); err != nil {
		return err
	}
	return writeYAMLFromJSON(w, buf.Bytes())
}

// appendVersionedObject appends the compact JSON object appendJSON
// appends, with the schema version as its first field (anything that is
// not an object is appended as it is).
func appendVersionedObject(dst []byte, version int, appendJSON func([]byte) []byte) []byte {
	return appendStampedObject(dst, stamp{version: version}, appendJSON)
}

// appendStampedObject is appendVersionedObject with the stamp's members.
func appendStampedObject(dst []byte, st stamp, appendJSON func([]byte) []byte) []byte {
	start := len(dst)
	prefix := "{" + st.compact()
	dst = append(dst, prefix...)
	dst = appendJSON(dst)
	obj := dst[start+len(prefix):]
	if len(obj) < 2 || obj[0] != '{' {
		// Not an object: take the prefix back out.
		copy(dst[start:], obj)
		return dst[:start+len(obj)]
	}
	if obj[1] == '}' {
		// {} → {"schemaVersion":N}
		copy(dst[start+len(prefix):], obj[1:])
		return dst[:len(dst)-1]
	}
	// {"a":… → {"schemaVersion":N,"a":…
	obj[0] = ','
	return dst
}

// PrintStreamed writes v, a document whose bulk is its slice field named
// field, as WriteJSONStreamed does (element by element), with v's schema
// version.
func (p *Printer) PrintStreamed(v any, field string) error {
	return writeJSONStreamed(p.Out, v, field, p.stampOf(v))
}

// JSONDoc starts a document written element by element (JSONDocWriter)
// with the schema version of doc, the document type it is written as
// (its head holds the other fields).
func (p *Printer) JSONDoc(doc, head any, field string) (*JSONDocWriter, error) {
	return newJSONDocWriter(p.Out, head, field, p.stampOf(doc))
}

// JSONLines starts a jsonl stream of doc's elements, each line with doc's
// schema version.
func (p *Printer) JSONLines(doc any) *JSONLWriter {
	jw := NewJSONLWriter(p.Out)
	jw.stamp = p.stampOf(doc)
	return jw
}
