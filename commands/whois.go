package commands

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// whoisOptions is 'whois' after flag parsing. WhatIf.Failover is set by
// --failover here, else by runWhois from the volume's generation.
type whoisOptions struct {
	Keys           []string
	Txn            bool
	Stdin          bool
	AssignmentFile string
	WhatIf         inspect.WhatIf
	Live           bool // also ask the brokers (whois_live.go)
	ExitCode       bool // with Live: exit 3 when they disagree
}

func init() {
	register(Descriptor{
		Path:     "whois-coordinator",
		Usage:    "which broker coordinates a group (or transactional id), and why",
		Problems: &views.ExitProblem{Label: "whois --live --exit-code", When: "keys whose volume and broker answers disagree", Rank: 50},
		Aliases:  []string{"whois"},
		Docs: []FormatDoc{
			{Title: "whois-coordinator", Doc: []inspect.WhoisResult{}, JSONL: "each key's answer", Rank: 10},
		},
		Tool: &MCPTool{Name: "whois", Title: "Group coordinator", Input: mcpserver.WhoisInput{},
			Description: "Which broker coordinates each group (or transactional id), by which tier, and what a hypothetical broker set would change."},
		Args:  "KEY...",
		Build: leaf(whoisFlags, checkWhois, runWhois),
	})
}

// whoisFlags are whois's own flags, bound to o.
func whoisFlags(o *whoisOptions) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "txn", Usage: "keys are transactional ids (hash tier only; shows the txn_state slot file)", Destination: &o.Txn},
		&cli.BoolFlag{Name: "stdin", Usage: "read keys from standard input, one per line (streamed: millions are fine)", Destination: &o.Stdin},
		&cli.StringFlag{Name: "assignment", Usage: "resolve against this assignment file instead of the volume's (e.g. a saved version)", Destination: &o.AssignmentFile},
		&cli.StringSliceFlag{Name: "what-if-down", Usage: "answer as if these brokers were down (comma list); the next assignment drops them and retires their entries"},
		&cli.StringSliceFlag{Name: "what-if-brokers", Usage: "answer for this broker set instead (comma list, all alive)"},
		&cli.BoolFlag{Name: "keep-listed", Usage: "with --what-if-down: keep down brokers listed as dead (the design's stable divisor) instead of dropping them", Destination: &o.WhatIf.KeepListed},
		&cli.StringFlag{Name: "failover", Usage: "with --what-if-* stopping the controller: what the next controller does with the explicit entries, drop (Go flavour: its first version has none) or reload (Rust: kept for active groups on alive brokers); default from the volume's kaas generation"},
		&cli.StringFlag{Name: "placement", Usage: "with --what-if-*: treat each key as a group active at the recompute, so the controller gives it an entry: rendezvous (today's kaas controller) or hash (the design); default: no new entries", Destination: &o.WhatIf.Placement},
		&cli.BoolFlag{Name: "live", Usage: "also ask the brokers (FindCoordinator, batched) and compare: columns WIRE and AGREES; needs --brokers", Destination: &o.Live},
		&cli.BoolFlag{Name: "exit-code", Usage: "with --live: exit 3 when any key's FindCoordinator answer disagrees with the volume", Destination: &o.ExitCode},
	}
}

// checkWhois reads the KEYs and the what-if brokers; --failover goes with
// a what-if, --exit-code with --live.
func checkWhois(c *cli.Context, _ *Globals, o *whoisOptions) error {
	o.Keys = c.Args().Slice()
	o.WhatIf.Down, o.WhatIf.Brokers = splitList(c.StringSlice("what-if-down")), splitList(c.StringSlice("what-if-brokers"))
	if fm := c.String("failover"); fm != "" {
		if !o.WhatIf.Active() {
			return exit.UsageErrorf("--failover models a controller that stops: it goes with --what-if-down or --what-if-brokers")
		}
		m, err := inspect.ParseFailover(fm)
		if err != nil {
			return exit.UsageErrorf("%v", err)
		}
		o.WhatIf.Failover, o.WhatIf.FailoverWhy = m, "model "+fm+" from --failover"
		o.WhatIf.Rule = inspect.FailoverRuleOf(m)
	}
	if o.ExitCode && !o.Live {
		return exit.UsageErrorf("--exit-code goes with --live")
	}
	return nil
}

// splitList flattens repeated and comma-separated values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// loadAssignment reads the assignment from --assignment or the volume.
// With keys (not nil), only their explicit entries are kept and only
// findings about them are printed; per-entry findings are folded into one
// line per kind either way (each key's own warnings are in its answer).
func loadAssignment(g *Globals, file string, keys []string) (*volume.Assignment, error) {
	if file == "" {
		l, err := g.Layout()
		if err != nil {
			return nil, err
		}
		file = l.AssignmentPath()
	}
	a, findings, err := volume.ReadAssignmentWith(file, volume.AssignmentOptions{Groups: keys, Fold: true})
	if err != nil {
		return nil, err
	}
	g.WarnFindings(findings)
	return a, nil
}

// whoisScope is the explicit entries whois needs: those of the named group
// keys, none for transactional ids (hash tier only), and all (nil) for keys
// on stdin or a what-if scenario (which counts every entry it keeps).
func whoisScope(opts whoisOptions) []string {
	switch {
	case opts.Stdin || opts.WhatIf.Active():
		return nil
	case opts.Txn:
		return []string{}
	}
	return append([]string{}, opts.Keys...)
}

func runWhois(ctx context.Context, g *Globals, opts whoisOptions) error {
	if opts.Live {
		return runWhoisLiveCmd(ctx, g, opts) // whois_live.go
	}
	if opts.WhatIf.Active() && opts.WhatIf.Failover == "" {
		opts.WhatIf.Failover, opts.WhatIf.FailoverWhy, opts.WhatIf.Rule = inspect.AssumedFailover(g.Generation())
	}
	if len(opts.Keys) == 0 && !opts.Stdin {
		return exit.UsageErrorf("give at least one KEY, or --stdin to read keys from standard input")
	}
	if opts.WhatIf.KeepListed && len(opts.WhatIf.Down) == 0 {
		return exit.UsageErrorf("--keep-listed goes with --what-if-down")
	}
	wh, _, err := newWhois(g, opts, opts.WhatIf)
	if err != nil {
		return err
	}
	if wh.Failover != nil && g.Printer.Format != render.Table && g.Printer.Format != render.Wide {
		// Machine output carries no scenario line: say it on stderr.
		g.Notef("%s", wh.Failover.Text)
	}
	if opts.Stdin {
		if len(opts.Keys) > 0 {
			return exit.UsageErrorf("give keys as arguments or with --stdin, not both")
		}
		return streamWhois(g, wh, g.IO.In)
	}
	return g.Printer.Print(views.WhoisOutput(wh, wh.ResolveAll(opts.Keys)))
}

// newWhois reads the assignment the keys are resolved against (--assignment
// or the volume's, loadAssignment) and answers for it under whatIf.
func newWhois(g *Globals, opts whoisOptions, whatIf inspect.WhatIf) (*inspect.Whois, *volume.Assignment, error) {
	a, err := loadAssignment(g, opts.AssignmentFile, whoisScope(opts))
	if err != nil {
		return nil, nil, err
	}
	kind := inspect.KindGroup
	if opts.Txn {
		kind = inspect.KindTxn
	}
	wh, err := inspect.NewWhois(a, kind, whatIf)
	if err != nil {
		return nil, nil, exit.UsageErrorf("%v", err)
	}
	return wh, a, nil
}

// streamWhois answers keys from r line by line (views.StreamWhois).
func streamWhois(g *Globals, wh *inspect.Whois, r io.Reader) error {
	n, err := views.StreamWhois(g.IO.Out, g.Printer, wh, r)
	if err != nil {
		return err
	}
	if n == 0 {
		g.Warnf("no keys on standard input")
	} else if g.IO.ErrTTY {
		g.Notef("resolved %s keys", strconv.Itoa(n))
	}
	return nil
}
