package render

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// Ids that are not valid UTF-8 (kaas accepts any bytes in a group id)
// cannot be JSON strings. Machine output keeps them reversible this way:
// every string field FIELD whose value is not valid UTF-8 is written as
// usual (each invalid byte becomes U+FFFD) and followed by a field
// FIELD+Base64Suffix holding the exact bytes in standard base64; a list of
// strings FIELD with such an element is followed by FIELD+Base64Suffix, the
// base64 of every element in order. The extra field is present only then,
// so output for valid ids never changes. YAML is derived from the JSON and
// carries the same fields.

// Base64Suffix names the field carrying the exact bytes of an id that is
// not valid UTF-8: "group" → "groupBase64".
const Base64Suffix = "Base64"

// AppendBase64Field appends `,"NAMEBase64":"…"` when s is not valid UTF-8,
// for hand-written JSON encoders that must match WriteJSON.
func AppendBase64Field(dst []byte, name string, s []byte) []byte {
	if utf8.Valid(s) {
		return dst
	}
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, Base64Suffix+`":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, s)
	return append(dst, '"')
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// hasInvalidUTF8 reports whether a string reachable through v is not
// valid UTF-8 (map keys and values of json.Marshaler types excepted).
func hasInvalidUTF8(v reflect.Value, depth int) bool {
	if depth > maxDepth || !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		return !utf8.ValidString(v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if hasInvalidUTF8(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if hasInvalidUTF8(it.Value(), depth+1) {
				return true
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return hasInvalidUTF8(v.Elem(), depth+1)
		}
	case reflect.Struct:
		si := infoOf(v.Type())
		if si.marshaler {
			return false
		}
		for _, i := range si.exported {
			if hasInvalidUTF8(v.Field(i), depth+1) {
				return true
			}
		}
	}
	return false
}

func implementsMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// lossless returns v as a tree that encodes to the same JSON as v, plus the
// base64 siblings of invalid strings.
func lossless(v reflect.Value, depth int) any {
	if !v.IsValid() || depth > maxDepth {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if v.Kind() == reflect.Pointer && implementsMarshaler(v.Type()) {
			return v.Interface()
		}
		return lossless(v.Elem(), depth+1)
	case reflect.Struct:
		if implementsMarshaler(v.Type()) {
			return v.Interface()
		}
		obj := jsonObject{}
		addStructFields(&obj, v, depth)
		return obj
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return v.Interface()
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = lossless(v.Index(i), depth+1)
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v.Interface()
		}
		keys := v.MapKeys()
		type kv struct {
			k string
			v reflect.Value
		}
		var kvs []kv
		for _, k := range keys {
			ks, err := mapKeyString(k)
			if err != nil {
				return v.Interface()
			}
			kvs = append(kvs, kv{ks, v.MapIndex(k)})
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		obj := make(jsonObject, 0, len(kvs))
		for _, e := range kvs {
			obj = append(obj, member{e.k, lossless(e.v, depth+1)})
		}
		return obj
	}
	return v.Interface()
}

func mapKeyString(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	b, err := json.Marshal(k.Interface())
	if err != nil {
		return "", err
	}
	return strings.Trim(string(b), `"`), nil
}

// addStructFields adds v's fields the way encoding/json names and omits
// them (embedded structs promoted), with base64 siblings.
func addStructFields(obj *jsonObject, v reflect.Value, depth int) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv, ft = fv.Elem(), ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !implementsMarshaler(ft) {
				addStructFields(obj, fv, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if hasOpt(opts, "omitempty") && isEmptyValue(fv) {
			continue
		}
		if hasOpt(opts, "omitzero") && fv.IsZero() {
			continue
		}
		if hasOpt(opts, "string") {
			*obj = append(*obj, member{name, fv.Interface()})
			continue
		}
		*obj = append(*obj, member{name, lossless(fv, depth+1)})
		if sib := base64Sibling(fv); sib != nil {
			*obj = append(*obj, member{name + Base64Suffix, sib})
		}
	}
}

// base64Sibling is the base64 form of a string field, or of a list of
// strings, that is not valid UTF-8; nil otherwise.
func base64Sibling(v reflect.Value) any {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			return base64.StdEncoding.EncodeToString([]byte(s))
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() != reflect.String {
			return nil
		}
		bad := false
		for i := 0; i < v.Len(); i++ {
			if !utf8.ValidString(v.Index(i).String()) {
				bad = true
				break
			}
		}
		if !bad {
			return nil
		}
		out := make([]string, v.Len())
		for i := range out {
			out[i] = base64.StdEncoding.EncodeToString([]byte(v.Index(i).String()))
		}
		return out
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// jsonObject is a JSON object with its members in order.
type jsonObject []member

type member struct {
	key string
	val any
}

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	out := []byte{'{'}
	encode := func(x any) error {
		buf.Reset()
		if err := enc.Encode(x); err != nil {
			return err
		}
		out = append(out, bytes.TrimRight(buf.Bytes(), "\n")...)
		return nil
	}
	for i, m := range o {
		if i > 0 {
			out = append(out, ',')
		}
		if err := encode(m.key); err != nil {
			return nil, err
		}
		out = append(out, ':')
		if err := encode(m.val); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}
