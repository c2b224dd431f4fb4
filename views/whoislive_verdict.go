package views

import (
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

// WhoisLiveVerdict tells whois --live's outcome over every key (how many
// FindCoordinator disagreed with, or agreed with all) and returns the run's
// exit: an error when a lookup failed, exit 3 for disagreements with
// exitCode (--exit-code).
func WhoisLiveVerdict(g render.Notes, st *inspect.WhoisLiveStats, exitCode bool) error {
	if st.Disagree > 0 {
		g.Warnf("%s of %d: FindCoordinator disagrees with the coordinator computed from the volume (brokers route by another assignment, or an entry names a broker that is gone)",
			render.Plural(st.Disagree, "key", "keys"), st.Keys)
	} else if st.Keys > 0 {
		g.Notef("live: FindCoordinator agrees with the volume for all %s", render.Plural(st.Keys, "key", "keys"))
	}
	if st.Failed > 0 {
		return fmt.Errorf("FindCoordinator failed for %s", render.Plural(st.Failed, "key", "keys"))
	}
	if st.Disagree > 0 && exitCode {
		return exit.ProblemsFound("%s disagree", render.Plural(st.Disagree, "key", "keys"))
	}
	return nil
}
