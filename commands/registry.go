package commands

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// A command file registers its command from init(); the parent of a
// sub-command ("groups list" → "groups") is created on first use, so every
// command lives in its own file and no central list needs editing.

type registration struct {
	parent string
	build  func() *cli.Command
}

var registry []registration

// parentUsage describes the parent commands.
var parentUsage = map[string]string{}

// register adds a top-level command.
func register(build func() *cli.Command) { registry = append(registry, registration{build: build}) }

// registerSub adds a sub-command under parent, described by usage.
func registerSub(parent, usage string, build func() *cli.Command) {
	registry = append(registry, registration{parent: parent, build: build})
	if usage != "" {
		parentUsage[parent] = usage
	}
}

// parentDescription is the help text of a parent command ('kaasctl help
// offsets'), set by describeParent.
var parentDescription = map[string]string{}

// describeParent sets the help text of a parent command.
func describeParent(parent, text string) { parentDescription[parent] = text }

func buildCommands() []*cli.Command {
	var top []*cli.Command
	parents := map[string]*cli.Command{}
	for _, r := range registry {
		c := r.build()
		if r.parent == "" {
			top = append(top, c)
			continue
		}
		p, ok := parents[r.parent]
		if !ok {
			p = &cli.Command{Name: r.parent, Usage: parentUsage[r.parent], Description: parentDescription[r.parent]}
			parents[r.parent] = p
			top = append(top, p)
		}
		p.Subcommands = append(p.Subcommands, c)
	}
	for _, p := range parents {
		slices.SortFunc(p.Subcommands, func(a, b *cli.Command) int { return strings.Compare(a.Name, b.Name) })
	}
	slices.SortFunc(top, func(a, b *cli.Command) int { return strings.Compare(a.Name, b.Name) })
	return top
}
