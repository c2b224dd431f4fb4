package observe

import (
	"context"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A command's inputs, opened in one order for every command: what is
// missing (usage errors), the volume's layout and generation, then the
// broker client as the command connects.

// Connect is how OpenInputs makes the broker client.
type Connect uint8

const (
	// ConnectChecked: at least one seed must answer; the seeds that do
	// not are warned about.
	ConnectChecked Connect = iota
	// ConnectUnchecked: the client is made without asking the brokers, so
	// a long-running command (the exporter) starts while they are down.
	ConnectUnchecked
	// ConnectReport: as ConnectChecked, but the seeds that did not answer,
	// and the reason no broker did, are handed back for the command to
	// report (doctor's findings); only a usage error stops the command.
	ConnectReport
)

// Needs says which inputs a command needs and how it connects. A need is
// the usage error given when that input is missing ("": optional).
type Needs struct {
	Volume, Brokers string
	// Either is the usage error when neither input is given.
	Either  string
	Connect Connect
	// Offline: the brokers are not asked even when configured.
	Offline bool
}

// Inputs are what a command reads: the volume (nil without one) with the
// generation it assumes, and the brokers (nil without them).
type Inputs struct {
	Layout *volume.Layout
	Client *wire.Client
	// Wanted: brokers were configured and not skipped (Offline).
	Wanted bool
	// With ConnectReport: the seeds that did not answer, and why no
	// broker answered (Client nil then).
	BadSeeds []*wire.BrokerError
	ConnErr  error
}

// Close closes the broker client.
func (in *Inputs) Close() {
	if in != nil && in.Client != nil {
		in.Client.Close()
	}
}

// InputEnv is what OpenInputs asks of the run: the volume named and its
// layout, whether brokers are asked for, and its clients.
type InputEnv interface {
	HasVolume() bool
	Layout() (volume.Layout, error)
	WantsBrokers() bool
	UncheckedClient() (*wire.Client, error)
	CheckedClient(ctx context.Context) (*wire.Client, []*wire.BrokerError, error)
	// Client warns about the seeds that did not answer; LiveClient also
	// advises running on the volume alone when no broker does.
	Client(ctx context.Context) (*wire.Client, error)
	LiveClient(ctx context.Context) (*wire.Client, error)
}

// OpenInputs resolves the volume and connects to the brokers as need
// says.
func OpenInputs(ctx context.Context, env InputEnv, need Needs) (*Inputs, error) {
	hasVolume := env.HasVolume()
	if need.Volume != "" && !hasVolume {
		return nil, exit.UsageErrorf("%s", need.Volume)
	}
	in := &Inputs{Wanted: !need.Offline && env.WantsBrokers()}
	if need.Brokers != "" && !in.Wanted {
		return nil, exit.UsageErrorf("%s", need.Brokers)
	}
	if need.Either != "" && !hasVolume && !in.Wanted {
		return nil, exit.UsageErrorf("%s", need.Either)
	}
	if hasVolume {
		l, err := env.Layout()
		if err != nil {
			return nil, err
		}
		// The generation (pinned with --kaas-version, or detected) decides
		// what the offset files mean.
		l = l.WithGeneration()
		in.Layout = &l
	}
	if !in.Wanted {
		return in, nil
	}
	var err error
	switch need.Connect {
	case ConnectUnchecked:
		in.Client, err = env.UncheckedClient()
	case ConnectReport:
		in.Client, in.BadSeeds, err = env.CheckedClient(ctx)
		if err != nil && exit.Code(err) != exit.Usage {
			in.ConnErr, err = err, nil
		}
	case ConnectChecked:
		if need.Brokers != "" {
			// Required: no advice to run on the volume alone.
			in.Client, err = env.Client(ctx)
		} else {
			in.Client, err = env.LiveClient(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}
