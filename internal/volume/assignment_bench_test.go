package volume

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseAssignment100k parses an assignment with 1,000 brokers and
// 100,000 explicit entries (the size SPEC §7's diff target names).
func BenchmarkParseAssignment100k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"controllerEpoch":7,"assignmentVersion":912,"generatedAt":"2026-07-23T11:40:02.120000000Z","controller":"kaas-0","brokers":[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"kaas-%d","health":"alive","lastSeen":"2026-07-23T11:40:02.120000000Z"}`, i)
	}
	sb.WriteString(`],"partitions":[],"consumerGroups":[`)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"groupId":"group-%d","broker":"kaas-%d","epoch":1}`, i, i%1000)
	}
	sb.WriteString(`]}`)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, _, err := ParseAssignment("a.json", data)
		if err != nil || len(a.ConsumerGroups) != 100000 {
			b.Fatal(err)
		}
	}
}
