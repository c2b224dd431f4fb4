package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// How openSources makes the broker client.
type connectMode uint8

const (
	// connectChecked: at least one seed must answer (liveClient); the seeds
	// that do not are warned about.
	connectChecked connectMode = iota
	// connectUnchecked: the client is made without asking the brokers, so
	// a long-running command (the exporter) starts while they are down.
	connectUnchecked
	// connectReport: as connectChecked, but the seeds that did not answer,
	// and the reason no broker did, are handed back for the command to
	// report (doctor's findings); only a usage error stops the command.
	connectReport
)

// sourceNeeds says which sources a command needs and how it connects.
// A need is the usage error given when that source is missing ("": the
// source is optional).
type sourceNeeds struct {
	volume, brokers string
	// either is the usage error when neither source is given.
	either string
	mode   connectMode
	// offline: the brokers are not asked even when configured.
	offline bool
}

// sources is what a command reads: the volume (nil without one) with the
// generation it assumes, and the brokers (nil without them).
type sources struct {
	layout *volume.Layout
	client *wire.Client
	// wanted: brokers were configured and not skipped (offline).
	wanted bool
	// With connectReport: the seeds that did not answer, and why no
	// broker answered (client nil then).
	badSeeds []*wire.BrokerError
	connErr  error
}

// Close closes the broker client.
func (s *sources) Close() {
	if s != nil && s.client != nil {
		s.client.Close()
	}
}

// openSources resolves the volume and connects to the brokers as need
// says, in one order for every command: what is missing (usage errors),
// the volume's layout and generation, then the client.
func openSources(ctx context.Context, g *Globals, need sourceNeeds) (*sources, error) {
	hasVolume := g.HasVolume()
	if need.volume != "" && !hasVolume {
		return nil, exit.UsageErrorf("%s", need.volume)
	}
	src := &sources{wanted: !need.offline && wantsBrokers(g)}
	if need.brokers != "" && !src.wanted {
		return nil, exit.UsageErrorf("%s", need.brokers)
	}
	if need.either != "" && !hasVolume && !src.wanted {
		return nil, exit.UsageErrorf("%s", need.either)
	}
	if hasVolume {
		l, err := g.Layout()
		if err != nil {
			return nil, err
		}
		// The generation (pinned with --kaas-version, or detected) decides
		// what the offset files mean.
		l = l.WithGeneration()
		src.layout = &l
	}
	if !src.wanted {
		return src, nil
	}
	var err error
	switch need.mode {
	case connectUnchecked:
		src.client, err = g.UncheckedClient()
	case connectReport:
		src.client, src.badSeeds, err = g.checkedClient(ctx)
		if err != nil && exit.Code(err) != exit.Usage {
			src.connErr, err = err, nil
		}
	case connectChecked:
		if need.brokers != "" {
			// Required: no advice to run on the volume alone.
			src.client, err = g.Client(ctx)
		} else {
			src.client, err = liveClient(ctx, g)
		}
	}
	if err != nil {
		return nil, err
	}
	return src, nil
}
