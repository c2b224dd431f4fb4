package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// NoteLiveRequests says how many groups were described with how many
// requests, per broker.
func NoteLiveRequests(g render.Notes, names *inspect.NodeNamer, reqs []wire.BrokerCount, total int64, described int) {
	var rounds []string
	for _, bc := range reqs {
		if !bc.Seed {
			rounds = append(rounds, fmt.Sprintf("%s %d", names.Name(bc.Node), bc.Requests))
		}
	}
	g.Notef("live: %s described with %s (requests per broker: %s)", render.Plural(described, "group", "groups"),
		render.Plural(int(total), "request", "requests"), strings.Join(rounds, ", "))
}
