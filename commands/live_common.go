package commands

import (
	"context"
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// Plumbing shared by the live commands (groups list/describe, whois
// --live, doctor).

// brokerSources summarizes the ListGroups answers as sources, with the
// --brokers addresses that did not answer and no listed broker has.
func brokerSources(cl *wire.Client, ls []wire.BrokerGroups, names *inspect.NodeNamer) []views.BrokerSourceView {
	return inspect.WithUnansweredSeeds(inspect.BrokerSources(ls, names), cl.Settings.Brokers, cl.Answered())
}

// LiveClient connects when brokers are configured. It returns nil, nil
// when none are; a connection failure is returned as the error.
func (g *Globals) LiveClient(ctx context.Context) (*wire.Client, error) {
	if !g.WantsBrokers() {
		return nil, nil
	}
	cl, err := g.Client(ctx)
	if err != nil && g.HasVolume() && exit.Code(err) != exit.Usage {
		return nil, fmt.Errorf("%w (for the volume alone, run without brokers: drop --brokers / unset KAASCTL_BROKERS)", err)
	}
	return cl, err
}

// WantsBrokers reports whether brokers were asked for. A connection setting
// that does not resolve must not silently turn a live run into an offline
// one when brokers were named (Client then reports it); with no brokers
// named anywhere it only earns a warning.
func (g *Globals) WantsBrokers() bool {
	if g.conn != nil && g.conn.Err != nil {
		if g.brokersFlag || g.IO.getenv(wire.EnvName(wire.KeyBrokers)) != "" || g.conn.Explicit {
			return true
		}
		g.Warnf("connection settings ignored (no brokers named): %v", g.conn.Err)
		return false
	}
	return g.HasBrokers()
}
