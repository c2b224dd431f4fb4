package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// followRestart follows the real restart (observe.FollowRestart) until
// it ends or --follow-timeout does, its events printed as they happen,
// with the brokers when given.
func followRestart(ctx context.Context, g *Globals, o followOptions, in inspect.RestartInput, plan *inspect.RestartPlan, a *volume.Assignment, l volume.Layout) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	jsonl := g.Printer.Format == render.JSON || g.Printer.Format == render.JSONL
	fo := observe.RestartFollowOptions{KeepGoing: o.KeepGoing, PollInterval: o.PollInterval, SettleTimeout: o.SettleTimeout,
		Emit: func(e inspect.FollowEvent) { views.WriteFollowEvent(g.Printer, e, jsonl) }, Notes: g}
	if g.HasBrokers() {
		cl, err := g.Client(ctx)
		if err != nil {
			return err
		}
		defer cl.Close()
		fo.Client = cl
	}
	return observe.FollowRestart(ctx, fo, in, plan, a, l)
}
