package render

import (
	"reflect"
	"strings"
)

// Field documents one machine-output field: its JSON path and kind.
type Field struct {
	Path string
	Kind string
}

// Fields lists the JSON fields of v's type (a struct, or a slice of
// structs), following nested structs, slices ("[]") and maps ("{}"), in
// declaration order. It is what 'kaasctl help formats' prints, so the
// documentation can never drift from the types.
func Fields(v any) []Field {
	var out []Field
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	prefix := ""
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix += "[]"
		}
		t = t.Elem()
	}
	walkFields(t, prefix, map[reflect.Type]bool{}, &out)
	return out
}

// walkFields appends the fields of struct type t under prefix, then each
// field's own fields (a struct's, or its elements' in a slice, array or
// map). seen holds the types on the current path, so a recursive type is
// listed once rather than forever.
func walkFields(t reflect.Type, prefix string, seen map[reflect.Type]bool, out *[]Field) {
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft, _ := derefType(f.Type)
			walkFields(ft, prefix, seen, out) // promoted, as encoding/json does
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := fieldPath(prefix, name)
		ft, pointer := derefType(f.Type)
		kind := kindName(ft)
		if pointer || strings.Contains(tag, "omitempty") {
			kind += ", optional"
		}
		*out = append(*out, Field{Path: path, Kind: kind})
		walkNested(ft, path, seen, out)
	}
}

// derefType is t without its pointers; pointer says whether it had any
// (a nil pointer leaves the field out, so it is optional).
func derefType(t reflect.Type) (reflect.Type, bool) {
	pointer := false
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		pointer = true
	}
	return t, pointer
}

// fieldPath is the path of field name under prefix: "a.b", or "[]b" for
// a field of the elements of a top-level slice.
func fieldPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	if strings.HasSuffix(prefix, "]") && !strings.Contains(prefix, ".") && strings.Trim(prefix, "[]") == "" {
		return prefix + name
	}
	return prefix + "." + name
}

// walkNested lists the fields inside a field of type ft at path: a
// struct's own (time's types are leaves), or its elements' for a slice or
// array ("path[]") and a map ("path{}").
func walkNested(ft reflect.Type, path string, seen map[reflect.Type]bool, out *[]Field) {
	switch ft.Kind() {
	case reflect.Struct:
		if ft.PkgPath() != "time" {
			walkFields(ft, path, seen, out)
		}
	case reflect.Slice, reflect.Array:
		et, _ := derefType(ft.Elem())
		walkFields(et, path+"[]", seen, out)
	case reflect.Map:
		et, _ := derefType(ft.Elem())
		walkFields(et, path+"{}", seen, out)
	}
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array of " + kindName(t.Elem())
	case reflect.Map:
		return "object of " + kindName(t.Elem())
	case reflect.Pointer:
		return kindName(t.Elem())
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if t.PkgPath() == "time" && t.Name() == "Time" {
			return "string (RFC 3339 time)"
		}
		return "object"
	}
	return t.Kind().String()
}
