package commands

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

// whois --live: FindCoordinator for every key (batched), beside the answer
// computed from the volume.

// whoisLiveStats counts what a run found.
type whoisLiveStats struct {
	keys, disagree, failed int
}

func liveWhoisResults(ctx context.Context, cl *wire.Client, wh *inspect.Whois, names *inspect.NodeNamer, keys []string, st *whoisLiveStats) ([]views.WhoisLiveResult, error) {
	coords, err := findCoordinators(ctx, cl, keys, wh.Kind == inspect.KindTxn)
	if err != nil {
		return nil, err
	}
	out := make([]views.WhoisLiveResult, len(keys))
	for i, k := range keys {
		r := views.WhoisLiveResult{WhoisResult: wh.Resolve(k), WireNode: -1}
		co := coords[k]
		if co.Err != "" {
			r.WireError = co.Err
		} else {
			r.WireNode = co.NodeID
			r.WireCoordinator = names.Name(co.NodeID)
		}
		r.Compared = co.Err == "" || co.Code == kerr.CoordinatorNotAvailable.Code
		r.Agrees = r.Compared && !inspect.WireDisagrees(r.Coordinator, co)
		if !r.Compared {
			st.failed++
			r.Warnings = append(r.Warnings, "FindCoordinator failed: "+co.Err)
		} else if !r.Agrees {
			st.disagree++
			wireSays := r.WireCoordinator
			if wireSays == "" {
				wireSays = "no coordinator (" + co.Err + ")"
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("DISAGREES: FindCoordinator says %s, the volume says %s", wireSays, views.OrNone(r.Coordinator)))
		}
		if r.Warnings == nil {
			r.Warnings = []string{}
		}
		st.keys++
		out[i] = r
	}
	return out, nil
}

// runWhoisLive answers keys (arguments, or stdin in chunks) with the wire
// beside the volume.
func runWhoisLive(ctx context.Context, g *Globals, cl *wire.Client, wh *inspect.Whois, opts whoisOptions, names *inspect.NodeNamer, exitCode bool) error {
	var st whoisLiveStats
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
	return whoisLiveVerdict(g, &st, exitCode)
}

func whoisLiveVerdict(g *Globals, st *whoisLiveStats, exitCode bool) error {
	if st.disagree > 0 {
		g.Warnf("%s of %d: FindCoordinator disagrees with the coordinator computed from the volume (brokers route by another assignment, or an entry names a broker that is gone)",
			render.Plural(st.disagree, "key", "keys"), st.keys)
	} else if st.keys > 0 {
		g.Notef("live: FindCoordinator agrees with the volume for all %s", render.Plural(st.keys, "key", "keys"))
	}
	if st.failed > 0 {
		return fmt.Errorf("FindCoordinator failed for %s", render.Plural(st.failed, "key", "keys"))
	}
	if st.disagree > 0 && exitCode {
		return exit.ProblemsFound("%s disagree", render.Plural(st.disagree, "key", "keys"))
	}
	return nil
}

// streamWhoisLive reads keys from stdin and answers them findChunk at a
// time, so millions of keys never sit in memory at once.
func streamWhoisLive(ctx context.Context, g *Globals, cl *wire.Client, wh *inspect.Whois, names *inspect.NodeNamer, st *whoisLiveStats) error {
	out := render.NewStream(g.IO.Out, g.Printer.Format, views.WhoisLiveHeaders(wh),
		fmt.Sprintf("%s; live: brokers answering %s", wh.Scenario, views.OrNone(strings.Join(cl.Answered(), ","))))
	// Keys go to the brokers in chunks: one batched FindCoordinator each.
	flush := func(keys []string) error {
		if len(keys) == 0 {
			return nil
		}
		rs, err := liveWhoisResults(ctx, cl, wh, names, keys, st)
		if err != nil {
			return err
		}
		for _, r := range rs {
			var jerr error
			appendJSON := func(dst []byte) []byte {
				// render's JSON: the same form as every command (no HTML
				// escaping, [] for nil, keyBase64 for a key that is not UTF-8).
				var b bytes.Buffer
				jerr = render.WriteJSON(&b, r, false)
				return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
			}
			if err := out.Item(appendJSON, r, func() []string { return views.WhoisLiveRow(r) }); err != nil {
				return err
			}
			if jerr != nil {
				return jerr
			}
		}
		return nil
	}
	chunk := make([]string, 0, findChunk)
	err := readKeys(g.IO.In, func(key []byte) error {
		chunk = append(chunk, string(key))
		if len(chunk) < findChunk {
			return nil
		}
		err := flush(chunk)
		chunk = chunk[:0]
		return err
	})
	if err == nil {
		err = flush(chunk)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if out.Count() == 0 {
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
	if !g.HasBrokers() && (g.conn == nil || g.conn.err == nil) {
		return exit.UsageErrorf("--live needs brokers: pass --brokers (or set KAASCTL_BROKERS or a profile)")
	}
	cl, err := g.Client(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	a, err := loadAssignment(g, opts.AssignmentFile, whoisScope(opts))
	if err != nil {
		return err
	}
	kind := inspect.KindGroup
	if opts.Txn {
		kind = inspect.KindTxn
	}
	wh, err := inspect.NewWhois(a, kind, inspect.WhatIf{})
	if err != nil {
		return exit.UsageErrorf("%v", err)
	}
	return runWhoisLive(ctx, g, cl, wh, opts, inspect.NewNodeNamer(a), opts.ExitCode)
}
