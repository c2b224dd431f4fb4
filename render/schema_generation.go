package render

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Every document about a volume or a cluster names the kaas generation it
// assumed, as its second field, generation (after schemaVersion): the
// Printer adds it where it adds schemaVersion, from Printer.Generation,
// to every document type registered with RegisterSchema unless it is
// registered generation-free (a document about kaasctl itself: its
// version, its command tree) or declares a top-level generation field of
// its own (then that one is the document's).

// GenerationField is the name of the field.
const GenerationField = "generation"

// generationFree holds the document types that carry no generation.
var generationFree = map[reflect.Type]bool{}

// RegisterGenerationFree records that documents of doc's type (as
// RegisterSchema takes it) name no generation. Call it only from an init
// function.
func RegisterGenerationFree(doc any) {
	t := docType(reflect.TypeOf(doc))
	generationFree[t] = true
	if t != nil && t.Kind() == reflect.Slice {
		generationFree[docType(t.Elem())] = true
	}
}

// ownGeneration caches whether a struct type declares a top-level
// generation field.
var ownGeneration sync.Map // reflect.Type → bool

// CarriesGeneration reports whether documents of v's type get the
// Printer's generation: registered, not generation-free, without a
// generation field of their own (a slice's elements are looked at).
func CarriesGeneration(v any) bool {
	t := docType(reflect.TypeOf(v))
	if t == nil || generationFree[t] {
		return false
	}
	if _, ok := schemaVersions[t]; !ok {
		if t.Kind() != reflect.Slice {
			return false
		}
		if _, ok := schemaVersions[docType(t.Elem())]; !ok {
			return false
		}
	}
	if t.Kind() == reflect.Slice {
		t = docType(t.Elem())
		if generationFree[t] {
			return false
		}
	}
	return t.Kind() == reflect.Struct && !declaresGeneration(t)
}

// declaresGeneration reports whether struct type t has a top-level JSON
// field named generation (embedded structs' fields included).
func declaresGeneration(t reflect.Type) bool {
	if v, ok := ownGeneration.Load(t); ok {
		return v.(bool)
	}
	has := false
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && docType(f.Type).Kind() == reflect.Struct:
			has = has || declaresGeneration(docType(f.Type))
		case name == GenerationField || name == "" && f.Name == GenerationField:
			has = true
		}
	}
	ownGeneration.Store(t, has)
	return has
}

// stamp is what the Printer adds at the start of a document: its schema
// version and, when it carries one, the generation (compact JSON).
type stamp struct {
	version int
	gen     []byte
}

// compact is the stamp's members in compact JSON, without braces.
func (st stamp) compact() string {
	s := `"` + SchemaVersionField + `":` + strconv.Itoa(st.version)
	if st.gen != nil {
		s += `,"` + GenerationField + `":` + string(st.gen)
	}
	return s
}

// stampOf is the stamp of a document of doc's type.
func (p *Printer) stampOf(doc any) stamp {
	st := stamp{version: SchemaVersionOf(doc)}
	if p == nil || p.Generation == nil || !CarriesGeneration(doc) {
		return st
	}
	if g := p.Generation(); g != nil {
		if b, err := json.Marshal(g); err == nil && len(b) > 0 && b[0] == '{' {
			st.gen = b
		}
	}
	return st
}
