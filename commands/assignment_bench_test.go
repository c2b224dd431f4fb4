package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func trWriteSynthAssignment(b *testing.B, path string, nBrokers, nEntries, shift int) {
	a := volume.Assignment{ControllerEpoch: 1, AssignmentVersion: int64(shift + 1), Controller: "kaas-0", GeneratedAt: "2026-07-23T11:40:02.120000000Z"}
	for i := 0; i < nBrokers; i++ {
		if shift > 0 && i%97 == 0 {
			continue
		}
		a.Brokers = append(a.Brokers, volume.BrokerEntry{ID: fmt.Sprintf("kaas-%d", i), Health: "alive", LastSeen: a.GeneratedAt})
	}
	a.Partitions = []volume.PartitionEntry{}
	for i := 0; i < nEntries; i++ {
		a.ConsumerGroups = append(a.ConsumerGroups, volume.GroupEntry{GroupID: fmt.Sprintf("group-%07d", i), Broker: fmt.Sprintf("kaas-%d", (i+shift*(i%3))%nBrokers), Epoch: 1})
	}
	data, err := json.Marshal(a)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAssignmentDiffCommand runs `kaasctl assignment diff OLD NEW`
// end to end (read and parse two 100,000-entry, 1,000-broker files,
// compare, print): SPEC §7 target under 1 s.
func BenchmarkAssignmentDiffCommand(b *testing.B) {
	TuneRuntime() // as the binary runs
	dir := b.TempDir()
	oldP, newP := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	trWriteSynthAssignment(b, oldP, 1000, 100000, 0)
	trWriteSynthAssignment(b, newP, 1000, 100000, 1)
	for _, format := range []string{"table", "json"} {
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				code := Main([]string{"kaasctl", "assignment", "diff", oldP, newP, "-o", format},
					&IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }})
				if code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/diff")
			b.ReportMetric(1000, "target-ms")
		})
	}
}
