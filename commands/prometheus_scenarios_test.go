package commands

import "testing"

// TestWithPrometheus runs the scenarios that Debian's prometheus scrapes
// and evaluates on the wall clock. They run together, as subtests of this
// one sequential test, so they finish before the package's parallel tests
// load the machine (prometheus's rule evaluation and the sandbox's
// timeouts are timed on the wall clock), and they overlap each other: each
// mostly waits for prometheus's next evaluation.
func TestWithPrometheus(t *testing.T) {
	for _, s := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"StopThroughFreezeThawAndDelete", promStopThroughFreezeThawAndDeleteWithPrometheus},
		{"DrainInTurnsAndKeepingUp", promDrainInTurnsAndKeepingUpWithPrometheus},
		{"ExporterConditions", promExporterConditionsWithPrometheus},
		{"Exporter", promExporterWithPrometheus},
		{"ExporterShards", promExporterShardsWithPrometheus},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			s.run(t)
		})
	}
}
