package render

import "reflect"

// NoNulls returns v with every nil slice and nil map (at any depth, through
// structs, pointers, slices and maps) replaced by an empty one, so machine
// output says [] and {} rather than null. Values without nil containers are
// returned as they are, without copying; a nil slice or map in an omitempty
// field does not count (encoding/json omits it either way).
func NoNulls(v any) any {
	if v == nil {
		return v
	}
	rv := reflect.ValueOf(v)
	if !hasNil(rv, 0) {
		return v
	}
	return fix(rv).Interface()
}

const maxDepth = 64

func hasNil(v reflect.Value, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return v.Type().Elem().Kind() != reflect.Uint8
		}
		for i := 0; i < v.Len(); i++ {
			if hasNil(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		if v.IsNil() {
			return true
		}
		it := v.MapRange()
		for it.Next() {
			if hasNil(it.Value(), depth+1) {
				return true
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return hasNil(v.Elem(), depth+1)
		}
	case reflect.Struct:
		si := infoOf(v.Type())
		for k, i := range si.exported {
			f := v.Field(i)
			if si.omitEmpty[k] && (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.IsNil() {
				continue // omitted whether nil or empty: nothing to replace
			}
			if hasNil(f, depth+1) {
				return true
			}
		}
	}
	return false
}

func fix(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return v
			}
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(fix(v.Index(i)))
		}
		return out
	case reflect.Map:
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		if v.IsNil() {
			return out
		}
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(it.Key(), fix(it.Value()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(fix(v.Elem()))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(fix(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for _, i := range infoOf(v.Type()).exported {
			out.Field(i).Set(fix(v.Field(i)))
		}
		return out
	}
	return v
}
