// Package completion is kaasctl's shell completion: the scripts for bash,
// zsh and fish (scripts/, embedded), which ask 'kaasctl __complete' for
// the candidates of the words typed so far, and the candidates themselves
// (commands, flags, fixed flag values, and group and broker names read
// from the volume the words name), once for every shell; and the helpers
// on urfave/cli's command tree that completion and the command line share
// (tree.go: a flag's names, a command by name, "did you mean").
package completion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/urfave/cli/v2"
)

// flagValues are the fixed choices of flags, for completion.
var flagValues = map[string][]string{
	"output":         formatNames(),
	"o":              formatNames(),
	"placement":      {"hash", "rendezvous"},
	"tier":           {"explicit", "hash", "hash-fallback", "none"},
	"severity":       {"error", "warning", "info"},
	"state":          {"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead", "Ongoing", "CompleteCommit", "CompleteAbort"},
	"max-versions":   {"kaas", "latest"},
	"sasl-mechanism": {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"},
}

// SetFlagValues gives flag's fixed choices that a package above this one
// knows (the assignors, the failover models); called at init only.
func SetFlagValues(flag string, values []string) { flagValues[flag] = values }

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

// QuoteBashWord escapes s with backslashes so bash reads it back as one
// word, as it is: no expansion, no splitting.
func QuoteBashWord(s string) string {
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

// UnquoteBashWord is the word bash will pass for w as typed (the word
// being completed may still lack its closing quote): backslash escapes
// and single and double quotes removed.
func UnquoteBashWord(w string) string {
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

// Env is what completion reads besides the command tree: the
// environment (the volume named there), the help topics, and the names of
// the flags that name the volume.
type Env struct {
	Getenv                      func(string) string
	Topics                      []string
	DataDirFlag, ClusterDirFlag string
}

// Complete returns the candidates for the last of words (the word being
// typed, possibly empty) among the commands cmds; words[0] is the first
// word after "kaasctl".
func Complete(cmds []*cli.Command, words []string, env Env) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	prev := words[:len(words)-1]
	leaf, cmds, i := walkCommands(cmds, prev)
	if leaf == nil || !IsLeaf(leaf) {
		if i < len(prev) {
			return nil
		}
		return commandCandidates(cmds, leaf != nil, cur)
	}
	// A flag's value?
	if rest := prev[i:]; len(rest) > 0 {
		if last := rest[len(rest)-1]; strings.HasPrefix(last, "-") && !strings.Contains(last, "=") {
			if name := strings.TrimLeft(last, "-"); TakesValue(leaf, name) {
				return filterPrefix(flagValueCandidates(name, words, env), cur)
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		return flagCandidates(leaf, cur, words, env)
	}
	return argCandidates(cmds, leaf, cur, words, env)
}

// walkCommands follows the command names at the start of words: the last
// command found (nil for none), its sub-commands, and how many words named
// commands.
func walkCommands(cmds []*cli.Command, words []string) (*cli.Command, []*cli.Command, int) {
	var leaf *cli.Command
	i := 0
	for ; i < len(words); i++ {
		c := FindCommand(cmds, words[i])
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
func flagCandidates(leaf *cli.Command, cur string, words []string, env Env) []string {
	var out []string
	if name, val, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
		prefix := cur[:len(cur)-len(val)]
		for _, v := range filterPrefix(flagValueCandidates(name, words, env), val) {
			out = append(out, prefix+v)
		}
		return out
	}
	for _, f := range leaf.Flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		for _, n := range FlagNames(f) {
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
func argCandidates(cmds []*cli.Command, leaf *cli.Command, cur string, words []string, env Env) []string {
	switch usage := leaf.ArgsUsage; {
	case strings.Contains(usage, "GROUP") || strings.Contains(usage, "KEY"):
		return filterPrefix(volumeNames("group", words, env), cur)
	case strings.Contains(usage, "bash|zsh|fish"):
		return filterPrefix([]string{"bash", "zsh", "fish"}, cur)
	case strings.Contains(usage, "TOPIC") || strings.Contains(usage, "COMMAND"):
		if leaf.Name == "help" {
			var out []string
			for _, c := range cmds {
				if !c.Hidden {
					out = append(out, c.Name)
				}
			}
			return filterPrefix(append(out, env.Topics...), cur)
		}
	}
	return nil
}

func flagValueCandidates(name string, words []string, env Env) []string {
	if vs, ok := flagValues[name]; ok {
		return vs
	}
	if kind, ok := flagDynamic[name]; ok {
		return volumeNames(kind, words, env)
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
func volumeNames(kind string, words []string, env Env) []string {
	in := volume.ResolveInput{EnvClusterDir: env.Getenv("KAAS_CLUSTER_DIR"), EnvDataDir: env.Getenv("KAAS_DATA_DIR")}
	for i, w := range words {
		for _, f := range []struct {
			name string
			dst  *string
		}{{env.DataDirFlag, &in.DataDirFlag}, {env.ClusterDirFlag, &in.ClusterDirFlag}} {
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

// ParseWords reads the words of '__complete [--shell=SH] WORD...': the
// shell asking ("": none named, for a script of an earlier kaasctl) and
// the words, which bash passes as typed (backslashes and quotes included)
// and are unquoted before they are matched.
func ParseWords(words []string) (shell string, out []string) {
	out = words
	if len(words) > 0 {
		if sh, ok := strings.CutPrefix(words[0], "--shell="); ok {
			shell, out = sh, words[1:]
		}
	}
	if shell == "bash" {
		out = slices.Clone(out)
		for i, w := range out {
			out[i] = UnquoteBashWord(w)
		}
	}
	return shell, out
}

// Replies are the candidates for words, quoted for shell: bash inserts a
// reply as it is, so every character its parser treats specially is
// escaped (a group named '*' is never expanded, 'a b' stays one word);
// zsh's compadd and fish quote what they insert themselves. A name with
// control or bidi characters is shown escaped, never handed to the
// terminal as it is.
func Replies(cmds []*cli.Command, words []string, shell string, env Env) []string {
	out := Complete(cmds, words, env)
	for i, cand := range out {
		out[i] = render.Clean(cand)
		if shell == "bash" {
			out[i] = QuoteBashWord(out[i])
		}
	}
	return out
}
