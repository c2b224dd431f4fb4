package volume

import (
	"fmt"
	"strings"
	"testing"
)

func benchOffsetFile(parts int) []byte {
	var f strings.Builder
	f.WriteString(`{"offsets":{`)
	for p := range parts {
		if p > 0 {
			f.WriteString(",")
		}
		fmt.Fprintf(&f, `"events/%d":%d`, p, 1000+p)
	}
	f.WriteString(`},"metadata":{`)
	for p := range parts {
		if p > 0 {
			f.WriteString(",")
		}
		fmt.Fprintf(&f, `"events/%d":"consumer-%d-59ff39037652d402"`, p, p%7)
	}
	f.WriteString(`}}`)
	return []byte(f.String())
}

// Parser throughput for a typical (6 partitions) and a large (600) file:
// the summary path used by listing, the fast entry path, and the general
// parser that explains oddities.
func BenchmarkParseOffsetFile(b *testing.B) {
	for _, parts := range []int{6, 600} {
		d := benchOffsetFile(parts)
		b.Run(fmt.Sprintf("summary/%d", parts), func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := summarizeFast(d); !ok {
					b.Fatal("not accepted")
				}
			}
		})
		b.Run(fmt.Sprintf("entries/%d", parts), func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			b.ReportAllocs()
			for b.Loop() {
				ParseOffsetFile("p", d)
			}
		})
		b.Run(fmt.Sprintf("general/%d", parts), func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			b.ReportAllocs()
			for b.Loop() {
				parseOffsetFileGeneral("p", d)
			}
		})
	}
}
