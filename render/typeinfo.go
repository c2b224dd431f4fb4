package render

import (
	"reflect"
	"strings"
	"sync"
)

// structInfo is what the machine-output walks (hasNil, fix,
// hasInvalidUTF8) need of a struct type, computed once per type:
// reflect.Type.Field builds a whole StructField (name, tag, index) on every
// call, and Implements looks methods up, which a listing of 1,000,000 rows
// would otherwise pay for every field of every row.
type structInfo struct {
	exported  []int  // indexes of the exported fields, in order
	omitEmpty []bool // per exported field: tagged omitempty
	marshaler bool   // implementsMarshaler
}

var structInfos sync.Map // reflect.Type → *structInfo

func infoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{marshaler: implementsMarshaler(t)}
	for i := 0; i < t.NumField(); i++ {
		if sf := t.Field(i); sf.IsExported() {
			_, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			si.exported = append(si.exported, i)
			si.omitEmpty = append(si.omitEmpty, hasOpt(opts, "omitempty"))
		}
	}
	actual, _ := structInfos.LoadOrStore(t, si)
	return actual.(*structInfo)
}
