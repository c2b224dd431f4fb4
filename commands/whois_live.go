package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// whois --live: FindCoordinator for every key (batched), beside the answer
// computed from the volume.

func liveWhoisResults(ctx context.Context, cl *wire.Client, wh *inspect.Whois, names *inspect.NodeNamer, keys []string, st *inspect.WhoisLiveStats) ([]views.WhoisLiveResult, error) {
	coords, err := cl.FindManyCoordinators(ctx, keys, wh.Kind == inspect.KindTxn)
	if err != nil {
		return nil, err
	}
	return inspect.CompareWhois(wh, names, keys, coords, st), nil
}

// runWhoisLive answers keys (arguments, or stdin in chunks) with the wire
// beside the volume.
func runWhoisLive(ctx context.Context, g *Globals, cl *wire.Client, wh *inspect.Whois, opts whoisOptions, names *inspect.NodeNamer, exitCode bool) error {
	var st inspect.WhoisLiveStats
	if !opts.Stdin {
		rs, err := liveWhoisResults(ctx, cl, wh, names, opts.Keys, &st)
		if err != nil {
			return err
		}
		if err := g.Printer.Print(views.WhoisLiveOutput(wh, rs, cl.Answered())); err != nil {
			return err
		}
	} else if err := streamWhoisLive(ctx, g, cl, wh, names, &st); err != nil {
		return err
	}
	return views.WhoisLiveVerdict(g, &st, exitCode)
}

// streamWhoisLive reads keys from stdin and answers them wire.FindChunk at a
// time (views.StreamWhoisLive).
func streamWhoisLive(ctx context.Context, g *Globals, cl *wire.Client, wh *inspect.Whois, names *inspect.NodeNamer, st *inspect.WhoisLiveStats) error {
	answer := func(keys []string) ([]views.WhoisLiveResult, error) {
		return liveWhoisResults(ctx, cl, wh, names, keys, st)
	}
	n, err := views.StreamWhoisLive(g.IO.Out, g.Printer, wh, g.IO.In, cl.Answered(), wire.FindChunk, answer)
	if err != nil {
		return err
	}
	if n == 0 {
		g.Warnf("no keys on standard input")
	}
	return nil
}

// runWhoisLiveCmd checks the options and connects.
func runWhoisLiveCmd(ctx context.Context, g *Globals, opts whoisOptions) error {
	if opts.WhatIf.Active() || opts.WhatIf.KeepListed {
		return exit.UsageErrorf("--live compares the brokers with the current assignment; it does not go with --what-if-down/--what-if-brokers")
	}
	if len(opts.Keys) == 0 && !opts.Stdin {
		return exit.UsageErrorf("give at least one KEY, or --stdin to read keys from standard input")
	}
	if len(opts.Keys) > 0 && opts.Stdin {
		return exit.UsageErrorf("give keys as arguments or with --stdin, not both")
	}
	if !g.HasBrokers() && (g.conn == nil || g.conn.Err == nil) {
		return exit.UsageErrorf("--live needs brokers: pass --brokers (or set KAASCTL_BROKERS or a profile)")
	}
	cl, err := g.Client(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	wh, a, err := newWhois(g, opts, inspect.WhatIf{})
	if err != nil {
		return err
	}
	return runWhoisLive(ctx, g, cl, wh, opts, inspect.NewNodeNamer(a), opts.ExitCode)
}
