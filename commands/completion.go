package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// Shell completion: the scripts call the hidden '__complete' command with
// the words typed so far; kaasctl answers with one candidate per line, so
// the logic (and the dynamic group and broker names read from the volume)
// lives here, once, for every shell.

// flagValues are the fixed choices of flags, for completion.
var flagValues = map[string][]string{
	"output":         formatNames(),
	"o":              formatNames(),
	"placement":      {"hash", "rendezvous"},
	"tier":           {"explicit", "hash", "hash-fallback", "none"},
	"severity":       {"error", "warning", "info"},
	"state":          {"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead", "Ongoing", "CompleteCommit", "CompleteAbort"},
	"max-versions":   {"kaas", "latest"},
	"assignor":       inspect.Assignors,
	"failover":       inspect.FailoverModels,
	"sasl-mechanism": {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"},
}

// flagDynamic names flags whose values come from the volume.
var flagDynamic = map[string]string{
	"group":           "group",
	"coordinator":     "broker",
	"what-if-down":    "broker",
	"what-if-brokers": "broker",
	"broker":          "broker",
	"brokers-order":   "broker",
}

func formatNames() []string {
	var out []string
	for _, f := range render.Formats {
		out = append(out, string(f))
	}
	return out
}

func init() {
	register(Descriptor{
		Path:   "completion",
		Usage:  "print a shell completion script (bash, zsh or fish)",
		Common: fgNone,
		Build:  newCompletionCmd,
	})
	register(Descriptor{
		Path:   "__complete",
		Usage:  "print completion candidates for the words typed so far (used by the completion scripts)",
		Hidden: true,
		Common: fgNone,
		Build:  newCompleteCmd,
	})
}

func newCompletionCmd() *cli.Command {
	return &cli.Command{
		ArgsUsage: "bash|zsh|fish",
		Action:    action(parseCompletion, runCompletion),
	}
}

// completionOptions is 'completion' after flag parsing.
type completionOptions struct {
	Script string // the completion script of the shell named
}

func parseCompletion(c *cli.Context) (completionOptions, error) {
	if c.NArg() != 1 {
		return completionOptions{}, exit.UsageErrorf("name one shell: bash, zsh or fish")
	}
	script, ok := completionScripts[c.Args().First()]
	if !ok {
		return completionOptions{}, exit.UsageErrorf("no completion for %q: choose bash, zsh or fish", c.Args().First())
	}
	return completionOptions{Script: script}, nil
}

func runCompletion(_ context.Context, g *Globals, o completionOptions) error {
	_, err := fmt.Fprint(g.IO.Out, o.Script)
	return err
}

func newCompleteCmd() *cli.Command {
	return &cli.Command{
		HideHelp:        true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runComplete(iosFrom(c), parseCompleteWords(c.App, c.Args().Slice()))
		},
	}
}

// completeOptions is '__complete' after parsing: the command tree, the
// words typed and the shell asking. Flags are not parsed (they are among
// the words), so it runs without Globals: a broken config file must not
// print a warning into the shell's completion.
type completeOptions struct {
	App   *cli.App
	Words []string
	// Shell is the shell the candidates are quoted for ("": as they are,
	// for a script of an earlier kaasctl, which passes no --shell).
	Shell string
}

// parseCompleteWords reads '__complete [--shell=SH] WORD...': bash passes
// its words as typed (backslashes and quotes included), so they are
// unquoted before they are matched.
func parseCompleteWords(app *cli.App, words []string) completeOptions {
	o := completeOptions{App: app, Words: words}
	if len(words) > 0 {
		if sh, ok := strings.CutPrefix(words[0], "--shell="); ok {
			o.Shell, o.Words = sh, words[1:]
		}
	}
	if o.Shell == "bash" {
		o.Words = slices.Clone(o.Words)
		for i, w := range o.Words {
			o.Words[i] = unquoteBashWord(w)
		}
	}
	return o
}

// runComplete prints one candidate a line, quoted for the shell asking:
// bash inserts a reply as it is, so every character its parser treats
// specially is escaped (a group named '*' is never expanded, 'a b' stays
// one word); zsh's compadd and fish quote what they insert themselves.
func runComplete(ios *IOStreams, o completeOptions) error {
	for _, cand := range complete(o.App, o.Words, ios.getenv) {
		// A name with control or bidi characters is shown escaped,
		// never handed to the terminal as it is.
		cand = render.Clean(cand)
		if o.Shell == "bash" {
			cand = quoteBashWord(cand)
		}
		if _, err := fmt.Fprintln(ios.Out, cand); err != nil {
			return err
		}
	}
	return nil
}

// quoteBashWord escapes s with backslashes so bash reads it back as one
// word, as it is: no expansion, no splitting.
func quoteBashWord(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		safe := c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte("-_./:@%+,", c) >= 0 || (c == '=' && i > 0)
		if !safe {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unquoteBashWord is the word bash will pass for w as typed (the word
// being completed may still lack its closing quote): backslash escapes
// and single and double quotes removed.
func unquoteBashWord(w string) string {
	var b strings.Builder
	quote := byte(0)
	esc := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case esc:
			b.WriteByte(c)
			esc = false
		case c == '\\' && quote != '\'':
			esc = true
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// complete returns the candidates for the last of words (the word being
// typed, possibly empty); words[0] is the first word after "kaasctl".
func complete(app *cli.App, words []string, getenv func(string) string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	prev := words[:len(words)-1]
	leaf, cmds, i := walkCommands(app.Commands, prev)
	if leaf == nil || !isLeaf(leaf) {
		if i < len(prev) {
			return nil
		}
		return commandCandidates(cmds, leaf != nil, cur)
	}
	// A flag's value?
	if rest := prev[i:]; len(rest) > 0 {
		if last := rest[len(rest)-1]; strings.HasPrefix(last, "-") && !strings.Contains(last, "=") {
			if name := strings.TrimLeft(last, "-"); takesValue(leaf, name) {
				return filterPrefix(flagValueCandidates(leaf, name, words, getenv), cur)
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		return flagCandidates(leaf, cur, words, getenv)
	}
	return argCandidates(app, leaf, cur, words, getenv)
}

// walkCommands follows the command names at the start of words: the last
// command found (nil for none), its sub-commands, and how many words named
// commands.
func walkCommands(cmds []*cli.Command, words []string) (*cli.Command, []*cli.Command, int) {
	var leaf *cli.Command
	i := 0
	for ; i < len(words); i++ {
		c := findCommand(cmds, words[i])
		if c == nil {
			break
		}
		leaf, cmds = c, c.Subcommands
	}
	return leaf, cmds, i
}

// commandCandidates is the visible commands of cmds starting with cur; a
// parent's help sub-command is not offered (kaasctl's own top-level help
// is).
func commandCandidates(cmds []*cli.Command, underParent bool, cur string) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden && (!underParent || c.Name != "help") && strings.HasPrefix(c.Name, cur) {
			out = append(out, c.Name)
		}
	}
	return out
}

// flagCandidates completes cur, a flag being typed: its name, or its value
// after "=".
func flagCandidates(leaf *cli.Command, cur string, words []string, getenv func(string) string) []string {
	var out []string
	if name, val, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
		prefix := cur[:len(cur)-len(val)]
		for _, v := range filterPrefix(flagValueCandidates(leaf, name, words, getenv), val) {
			out = append(out, prefix+v)
		}
		return out
	}
	for _, f := range leaf.Flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		for _, n := range flagNames(f) {
			flag := "--" + n
			if len(n) == 1 {
				flag = "-" + n
			}
			if strings.HasPrefix(flag, cur) {
				out = append(out, flag)
			}
		}
	}
	slices.Sort(out)
	return out
}

// argCandidates completes a positional argument of leaf, by what its
// usage says it takes.
func argCandidates(app *cli.App, leaf *cli.Command, cur string, words []string, getenv func(string) string) []string {
	switch usage := leaf.ArgsUsage; {
	case strings.Contains(usage, "GROUP") || strings.Contains(usage, "KEY"):
		return filterPrefix(volumeNames("group", words, getenv), cur)
	case strings.Contains(usage, "bash|zsh|fish"):
		return filterPrefix([]string{"bash", "zsh", "fish"}, cur)
	case strings.Contains(usage, "TOPIC") || strings.Contains(usage, "COMMAND"):
		if leaf.Name == "help" {
			var out []string
			for _, c := range app.Commands {
				if !c.Hidden {
					out = append(out, c.Name)
				}
			}
			return filterPrefix(append(out, topicNames()...), cur)
		}
	}
	return nil
}

func flagValueCandidates(leaf *cli.Command, name string, words []string, getenv func(string) string) []string {
	if vs, ok := flagValues[name]; ok {
		return vs
	}
	if kind, ok := flagDynamic[name]; ok {
		return volumeNames(kind, words, getenv)
	}
	return nil
}

func filterPrefix(vs []string, prefix string) []string {
	var out []string
	for _, v := range vs {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// volumeNames lists group ids or broker ids from the volume named on the
// command line or in the environment. It reads names only (a directory
// listing and assignment.json), so it stays fast on big volumes, and it is
// silent on any error: completion must never print noise.
func volumeNames(kind string, words []string, getenv func(string) string) []string {
	in := volume.ResolveInput{EnvClusterDir: getenv("KAAS_CLUSTER_DIR"), EnvDataDir: getenv("KAAS_DATA_DIR")}
	for i, w := range words {
		for _, f := range []struct {
			name string
			dst  *string
		}{{flagDataDir, &in.DataDirFlag}, {flagClusterDir, &in.ClusterDirFlag}} {
			if w == "--"+f.name && i+1 < len(words) {
				*f.dst = words[i+1]
			} else if v, ok := strings.CutPrefix(w, "--"+f.name+"="); ok {
				*f.dst = v
			}
		}
	}
	l, err := volume.Resolve(in)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	a, _, aerr := volume.ReadAssignment(l.AssignmentPath())
	switch kind {
	case "broker":
		if aerr == nil {
			for _, b := range a.Brokers {
				set[b.ID] = true
			}
		}
	case "group":
		if aerr == nil {
			for _, e := range a.ConsumerGroups {
				set[e.GroupID] = true
			}
		}
		for _, od := range l.OffsetsDirs() { // every offsets dir: the live one depends on the generation
			dir := od.Path
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".json") && filepath.Ext(strings.TrimSuffix(n, ".json")) != ".json" {
					set[strings.TrimSuffix(n, ".json")] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

var completionScripts = map[string]string{
	"bash": `# bash completion for kaasctl
_kaasctl_complete() {
    local words
    words=("${COMP_WORDS[@]:1:COMP_CWORD}")
    # One reply a line, read as it is: no word splitting, no glob
    # expansion (kaasctl quotes each reply for bash).
    COMPREPLY=()
    local line
    while IFS= read -r line; do
        COMPREPLY+=("$line")
    done < <(kaasctl __complete --shell=bash "${words[@]}" 2>/dev/null)
    return 0
}
complete -o default -F _kaasctl_complete kaasctl
`,
	"zsh": `#compdef kaasctl
# zsh completion for kaasctl
_kaasctl() {
    local -a candidates
    candidates=("${(@f)$(kaasctl __complete --shell=zsh "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if (( ${#candidates[@]} )) && [[ -n "${candidates[1]}" ]]; then
        compadd -- "${candidates[@]}"
    else
        _files
    fi
}
if [[ "$(basename -- ${(%):-%x})" != "_kaasctl" ]]; then
    compdef _kaasctl kaasctl
fi
`,
	"fish": `# fish completion for kaasctl
function __kaasctl_complete
    set -l words (commandline -opc)
    set -e words[1]
    kaasctl __complete --shell=fish $words (commandline -ct) 2>/dev/null
end
complete -c kaasctl -f -a '(__kaasctl_complete)'
`,
}
