package commands

import (
	"io"
	"testing"
)

// BenchmarkCommandStartup is what every run pays before its own work:
// building the command tree (the common flags on every command), parsing a
// command line and resolving the globals. The command stops at once (no
// brokers to ask, an empty --brokers is a usage error).
func BenchmarkCommandStartup(b *testing.B) {
	ios := &IOStreams{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main([]string{"kaasctl", "groups", "list", "--brokers", "", "-o", "json"}, ios); code == 0 {
			b.Fatal("an empty --brokers was accepted")
		}
	}
}
