package commands

import (
	"cmp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/views"
)

// A command is one file registering one Descriptor from init(): where it
// sits in the tree, its one-line usage, which common flags its help lists,
// the machine documents it prints, and the builder of its flags and
// action. Its long help (description, usage text) is its file in
// internal/helptext, found by its path. The tree, the common flags each
// command gets and 'kaasctl help formats' are all derived from the
// registry, and so are its exit codes ('help exit-codes', --help-json)
// and its MCP tool: nothing central is edited to add a command.

// Descriptor is one command (a parent when Build is nil: its
// sub-commands register under its path).
type Descriptor struct {
	// Path is the command's words from the top: "groups describe".
	Path string
	// Usage is the one line the command lists say.
	Usage string
	// Aliases are other names of the command's last word.
	Aliases []string
	// Hidden commands run but are not listed (nor are their documents in
	// the whole 'help formats'; 'help formats COMMAND' shows them).
	Hidden bool
	// Common is the common flags the command's help lists (the others are
	// accepted, hidden): zero takes the parent's, and all when no parent
	// says; fgNone lists none.
	Common flagGroup
	// Docs are the machine documents the command prints (-o json, yaml),
	// for 'kaasctl help formats'.
	Docs []FormatDoc
	// Args is what the command takes besides its flags ("GROUP...").
	Args string
	// HelpVars fill the {{name}} placeholders of the command's help text.
	HelpVars helptext.Vars
	// Problems is when the command exits 3 (problems found): its row of
	// 'help exit-codes' (nil: it never does).
	Problems *views.ExitProblem
	// Refuses: the command can exit 4 (refused for safety).
	Refuses bool
	// Tool serves the command as a tool of 'kaasctl mcp' (nil: not one).
	Tool *MCPTool
	// Build makes the command's flags and action (leaf); the registry sets
	// its name, usage, arguments, aliases, hidden flag and help text from
	// the descriptor.
	Build func() *cli.Command
}

// FormatDoc is one machine document of a command.
type FormatDoc struct {
	// Title names the document in 'help formats': the commands it is
	// printed by, with what selects it ("groups describe (with brokers)",
	// "txn list / txn describe"); its command words find it for 'help
	// formats COMMAND'.
	Title string
	// Doc is a value of the document's type; its fields are read from it.
	Doc any
	// JSONL says what -o jsonl prints, one per line.
	JSONL string
	// Rank orders the documents of 'help formats' (the order an operator
	// meets the commands); zero lists it after the ranked ones.
	Rank int
}

var registry []Descriptor

// register adds a command (or a parent) to the tree.
func register(d Descriptor) {
	registry = append(registry, d)
	for _, f := range d.Docs {
		registerSchema(f)
	}
}

// exitProblems are the rows of 'help exit-codes' the commands register.
func exitProblems() []views.ExitProblem {
	var out []views.ExitProblem
	for _, d := range registry {
		if d.Problems != nil {
			out = append(out, *d.Problems)
		}
	}
	return out
}

// exitCodesOf are the exit codes the command at path can end with
// (--help-json).
func exitCodesOf(path string) []int {
	codes := []int{exit.OK, exit.Error, exit.Usage}
	d, _ := descriptorOf(path)
	if d.Problems != nil {
		codes = append(codes, exit.Problems)
	}
	if d.Refuses {
		codes = append(codes, exit.Refused)
	}
	return codes
}

// descriptorOf is the descriptor registered at path (ok false: none).
func descriptorOf(path string) (Descriptor, bool) {
	for _, d := range registry {
		if d.Path == path {
			return d, true
		}
	}
	return Descriptor{}, false
}

// flagGroupsOf returns the common flags the command at path takes: its
// own descriptor's, else its nearest parent's that says, else all.
func flagGroupsOf(path []string) flagGroup {
	for n := len(path); n > 0; n-- {
		if d, ok := descriptorOf(strings.Join(path[:n], " ")); ok && d.Common != 0 {
			if d.Common == fgNone {
				return 0
			}
			return d.Common
		}
	}
	return fgAll
}

// listedDoc is a document with whether its command is hidden.
type listedDoc struct {
	FormatDoc
	hidden bool
}

// appDocs are the machine documents of kaasctl itself rather than of a
// command (--help-json's), registered with registerAppDoc.
var appDocs []FormatDoc

// registerAppDoc adds a document kaasctl prints outside any command.
func registerAppDoc(d FormatDoc) {
	appDocs = append(appDocs, d)
	registerSchema(d)
}

// formatDocs is every command's documents, then kaasctl's own, in the
// order 'help formats' lists them (Rank, then registration).
func formatDocs() []listedDoc {
	var out []listedDoc
	for _, d := range registry {
		for _, f := range d.Docs {
			out = append(out, listedDoc{f, d.Hidden})
		}
	}
	for _, f := range appDocs {
		out = append(out, listedDoc{f, false})
	}
	rank := func(f listedDoc) int {
		if f.Rank == 0 {
			return int(^uint(0) >> 1)
		}
		return f.Rank
	}
	slices.SortStableFunc(out, func(a, b listedDoc) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// buildCommands builds the tree: each command from its descriptor under
// its parent (created on first use when no descriptor names it), sorted
// by name.
func buildCommands() []*cli.Command {
	byPath := map[string]*cli.Command{}
	var top []*cli.Command
	var node func(path string) *cli.Command
	node = func(path string) *cli.Command {
		if c, ok := byPath[path]; ok {
			return c
		}
		words := strings.Fields(path)
		c := &cli.Command{Name: words[len(words)-1]}
		byPath[path] = c
		if len(words) == 1 {
			top = append(top, c)
		} else {
			p := node(strings.Join(words[:len(words)-1], " "))
			p.Subcommands = append(p.Subcommands, c)
		}
		return c
	}
	for _, d := range registry {
		c := node(d.Path)
		if d.Build != nil {
			name, subs := c.Name, c.Subcommands
			*c = *d.Build()
			c.Name, c.Subcommands = name, append(c.Subcommands, subs...)
		}
		describe(c, d)
	}
	byName := func(a, b *cli.Command) int { return strings.Compare(a.Name, b.Name) }
	for _, c := range byPath {
		slices.SortFunc(c.Subcommands, byName)
	}
	slices.SortFunc(top, byName)
	return top
}

// describe sets what the descriptor says of c: its usage, arguments, aliases and
// hidden flag, and its help text from internal/helptext (a builder's own
// stays where the descriptor or the text files say nothing).
func describe(c *cli.Command, d Descriptor) {
	if d.Usage != "" {
		c.Usage = d.Usage
	}
	if len(d.Aliases) > 0 {
		c.Aliases = d.Aliases
	}
	if d.Args != "" {
		c.ArgsUsage = d.Args
	}
	c.Hidden = c.Hidden || d.Hidden
	if s := helptext.Command(d.Path, d.HelpVars); s != "" {
		c.Description = s
	}
	if s := helptext.Usage(d.Path, d.HelpVars); s != "" {
		c.UsageText = s
	}
}
