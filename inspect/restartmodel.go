package inspect

import (
	"fmt"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// The controller's reaction to a broker leaving or rejoining, per kaas
// generation, in one place (plan restart simulates it version by version;
// whois --what-if-down models one step of it).
//
// Every version the controller writes lists only the alive brokers and
// carries explicit entries for the groups it sees active (in memory on a
// connected coordinator): a group whose entry names an alive broker keeps
// it; any other active group is placed afresh (rendezvous today, or the
// routing hash); inactive groups lose their entry and route by the hash
// tier over the alive brokers. What differs is a controller failover:

// FailoverModel is what a newly elected controller does with the previous
// version's explicit entries.
type FailoverModel string

const (
	// FailoverDrop: the Go flavour. The new controller's first version has
	// no consumerGroups at all (seen on a real Go cluster: "consumerGroups":
	// null), so every group routes by the hash tier over the alive brokers;
	// its next version places the active groups afresh (epoch 1).
	FailoverDrop FailoverModel = "drop"
	// FailoverReload: the Rust controller loads the previous assignment.json
	// on start, carries its version counter forward and balances the
	// previous entries against the active groups, as any other version.
	FailoverReload FailoverModel = "reload"
)

// FailoverModels lists the values of --failover.
var FailoverModels = []string{string(FailoverDrop), string(FailoverReload)}

// FailoverFor is the failover model of a kaas generation and why.
func FailoverFor(gen volume.Generation) (FailoverModel, string) {
	switch gen {
	case volume.GenGo:
		return FailoverDrop, "generation " + gen.Label() + ": a new Go controller drops every explicit entry (its first version has no consumerGroups); " +
			"a Rust ≤ 0.2.15 cluster shares this volume layout but reloads them: pin --failover reload for it"
	case volume.Gen016, volume.Gen018:
		return FailoverReload, "generation " + gen.Label() + ": a new Rust controller reloads the previous assignment.json and keeps the entries of active groups on alive brokers"
	}
	return FailoverReload, "generation unknown: assuming today's Rust controller (reloads the previous entries); pin --kaas-version or --failover"
}

// ParseFailover checks a --failover value.
func ParseFailover(s string) (FailoverModel, error) {
	switch FailoverModel(s) {
	case FailoverDrop, FailoverReload:
		return FailoverModel(s), nil
	}
	return "", fmt.Errorf("--failover %q: choose drop (Go: a new controller drops every explicit entry) or reload (Rust: it reloads them)", s)
}

// NextController is the broker the model expects to win the controller
// lease when the controller stops: the lowest alive broker id (what the
// sandbox does; on Kubernetes the lease goes to whichever broker asks
// first, which changes which later restart is a failover, not what a
// failover does).
func NextController(alive []string) string {
	if len(alive) == 0 {
		return ""
	}
	best := alive[0]
	for _, b := range alive[1:] {
		if b < best {
			best = b
		}
	}
	return best
}
