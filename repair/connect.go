package repair

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// WriteConn is what ConnectForWrite asks of its caller: whether brokers
// are configured, a checked client, and where notes and warnings go.
type WriteConn interface {
	render.Notes
	HasBrokers() bool
	Client(ctx context.Context) (*wire.Client, error)
}

// ConnectForWrite returns a live client, or nil offline, enforcing the
// rules of a write: the live path needs brokers; offline (--offline) needs
// every broker down or force (--force).
func ConnectForWrite(ctx context.Context, g WriteConn, offline, force bool) (*wire.Client, error) {
	if !offline {
		if !g.HasBrokers() {
			return nil, exit.UsageErrorf("no brokers given (--brokers, %s or a profile): kaasctl checks the group's state and commits through its coordinator; if every broker is down, use --offline", wire.EnvName(wire.KeyBrokers))
		}
		cl, err := g.Client(ctx)
		if err != nil {
			if exit.Code(err) == exit.Usage {
				return nil, err
			}
			return nil, fmt.Errorf("%v\nif every broker is down, rerun with --offline to write the offset files directly", err)
		}
		return cl, nil
	}
	if g.HasBrokers() {
		cl, err := g.Client(ctx)
		if err == nil {
			cl.Close()
			if !force {
				return nil, exit.Refusedf("--offline: the brokers answer, so a coordinator may hold the group in memory and overwrite the file on its next commit; drop --offline to go through the coordinator, or add --force if you are sure no broker has the group loaded")
			}
			g.Warnf("--offline --force: the brokers answer, but kaasctl writes the offset files directly; a broker that has the group loaded will overwrite them on its next commit")
		} else {
			g.Notef("no broker answered (%v): writing offline", oneLineErr(err))
		}
	}
	g.Warnf("offline: the group state is unknown; make sure every consumer of the group is stopped and no broker has it loaded (restart its coordinator after the write, or its cache brings the old offsets back)")
	return nil, nil
}

// oneLineErr is the first line of err.
func oneLineErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
