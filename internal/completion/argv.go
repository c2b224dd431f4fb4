package completion

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// The command line read against the tree before urfave parses it: a help
// request anywhere on the line, and flags moved in front of positional
// arguments.

// IsHelpFlag reports whether a is a request for help.
func IsHelpFlag(a string) bool {
	switch a {
	case "-h", "--help", "-help", "--help=true", "-h=true":
		return true
	}
	return false
}

// HelpRequest finds --help / -h on the command line (before any "--") and
// returns the command path it asks about: "kaasctl groups describe g1 -h"
// asks about [groups describe]. ok is false when no help was asked for, or
// when the words do not name a command (the normal run then reports the
// unknown command with a suggestion).
func HelpRequest(top []*cli.Command, args []string) (path []string, ok bool) {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return nil, false
	}
	asked := false
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if IsHelpFlag(a) {
			asked = true
		}
	}
	if !asked {
		return nil, false
	}
	cmds := top
	var leaf *cli.Command
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' {
			name := strings.TrimLeft(a, "-")
			if leaf != nil && !strings.Contains(name, "=") && !IsHelpFlag(a) && TakesValue(leaf, name) {
				i++
			}
			continue
		}
		if leaf != nil && IsLeaf(leaf) {
			continue // a positional argument of the leaf command
		}
		c := FindCommand(cmds, a)
		if c == nil {
			return nil, false
		}
		if c.SkipFlagParsing {
			return nil, false // the command reads its words itself (__complete)
		}
		path = append(path, c.Name)
		leaf, cmds = c, c.Subcommands
	}
	return path, true
}

// ReorderArgs moves flags in front of positional arguments for the command
// being run, so 'kaasctl whois g1 -o json' works like 'kaasctl whois -o json g1'
// (the flag package stops at the first positional). Everything after "--"
// stays positional.
func ReorderArgs(top []*cli.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := top
	var leaf *cli.Command
	i := 1
	for i < len(args) {
		c := FindCommand(cmds, args[i])
		if c == nil {
			break
		}
		out = append(out, args[i])
		leaf = c
		cmds = c.Subcommands
		i++
		if IsLeaf(c) {
			break
		}
	}
	if leaf == nil || !IsLeaf(leaf) || leaf.SkipFlagParsing {
		return args
	}
	var flags, pos []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if TakesValue(leaf, name) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
