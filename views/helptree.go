package views

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// The document of kaasctl --help-json: the command tree as data.

// HelpTree is the document --help-json prints.
type HelpTree struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Usage       string `json:"usage"`
	Description string `json:"description"`
	// Path is the subtree asked for ("" for the whole tree).
	Path          string            `json:"path"`
	ExitCodes     []ExitCodeDoc     `json:"exitCodes"`
	OutputFormats []OutputFormatDoc `json:"outputFormats"`
	// Environment is every variable kaasctl reads, with the flag it stands for.
	Environment []HelpEnv     `json:"environment"`
	Commands    []HelpCommand `json:"commands"`
}

// HelpEnv is one environment variable.
type HelpEnv struct {
	Name string `json:"name"`
	// Flag is the flag it stands in for ("" when none).
	Flag  string `json:"flag"`
	Usage string `json:"usage"`
}

// HelpCommand is one command of the tree.
type HelpCommand struct {
	Name string `json:"name"`
	// Path is the command line that runs it ("groups describe").
	Path        string   `json:"path"`
	Aliases     []string `json:"aliases"`
	Usage       string   `json:"usage"`
	ArgsUsage   string   `json:"argsUsage"`
	Description string   `json:"description"`
	Hidden      bool     `json:"hidden"`
	// Runnable: a leaf that does work (a parent only chooses a sub-command).
	Runnable bool       `json:"runnable"`
	Flags    []HelpFlag `json:"flags"`
	// ExitCodes are the codes it can end with (exitCodes says what each means).
	ExitCodes []int `json:"exitCodes"`
	// OutputFormats are the -o values it takes; Documents the machine
	// documents it prints.
	OutputFormats []string       `json:"outputFormats"`
	Documents     []HelpDocument `json:"documents"`
	Subcommands   []HelpCommand  `json:"subcommands"`
}

// HelpFlag is one flag of a command.
type HelpFlag struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	// Type is bool, string, int, duration (internal/when's grammar) or
	// stringList (repeatable, or comma separated).
	Type        string `json:"type"`
	TakesValue  bool   `json:"takesValue"`
	Repeatable  bool   `json:"repeatable"`
	Default     string `json:"default"`
	Placeholder string `json:"placeholder"`
	Usage       string `json:"usage"`
	Category    string `json:"category"`
	// Hidden flags are accepted without being listed in the help (the
	// connection flags of offline commands).
	Hidden bool `json:"hidden"`
	// Common: one of the flags every command takes (--data-dir, -o, --brokers, ...).
	Common bool `json:"common"`
	// Env are the environment variables that set it, ProfileKey where a
	// profile of config.yaml holds it; a flag beats its variable, which
	// beats the profile.
	Env        []string `json:"env"`
	ProfileKey string   `json:"profileKey"`
}

// HelpDocument is a machine document a command prints.
type HelpDocument struct {
	Name          string `json:"name"`
	SchemaVersion int    `json:"schemaVersion"`
	JSONL         string `json:"jsonl"`
}

// OutputFormatDoc is one -o format.
type OutputFormatDoc struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Machine     bool   `json:"machine"`
}

// ExitCodeDoc is one exit code: what 'kaasctl help exit-codes' says of
// it, and --help-json lists.
type ExitCodeDoc struct {
	Code int    `json:"code"`
	Name string `json:"name"`
	// title opens the help page's paragraph.
	Title   string `json:"-"`
	Meaning string `json:"meaning"`
}

// ExitProblem is when a command exits 3 (problems found): the label the
// help page gives it (commands sharing a label are one row), when, and the
// row's place on the page.
type ExitProblem struct {
	Label string
	When  string
	Rank  int
}

// ExitCodesPage is 'kaasctl help exit-codes': each code with what it
// means, the commands that exit 3 and when, and how refusals and partial
// failures end a run.
func ExitCodesPage(codes []ExitCodeDoc, problems []ExitProblem) string {
	var b strings.Builder
	b.WriteString("kaasctl exit codes\n\n")
	for _, d := range codes {
		fmt.Fprintf(&b, "  %d  %s\n", d.Code, wrapText(d.Title+": "+d.Meaning, 86, "     "))
		if d.Code == exit.Problems {
			for _, p := range problems {
				fmt.Fprintf(&b, "       %-25s %s\n", p.Label, p.When)
			}
		}
		if d.Code == exit.Refused {
			b.WriteString("     offsets reset and delete handle groups one by one, as Kafka's tool does: the other\n" +
				"     groups of the run are still written, and the run exits 4 if any group was refused.\n" +
				"     groups prune exits 4 when a selected group or row is refused (live, loaded by its\n" +
				"     coordinator, evidence that cannot tell), and when a plan selects more groups than\n" +
				"     --max-groups (then nothing is written)\n")
		}
	}
	b.WriteString("\nAny failure of a single item (one group, one partition, one file) makes the whole run\n" +
		"non-zero, and machine output (-o json/jsonl/yaml/csv) stays valid on partial failure.\n")
	return b.String()
}

// wrapText breaks s into lines of at most width, the later ones indented.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len(w) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// UnquoteUsage splits a flag's usage as urfave/cli's help does: the first
// `quoted` word is the value's placeholder, shown without its quotes.
func UnquoteUsage(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	name := usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+2+j:]
}

// HelpTopicsSection ends the app's help page: every topic of 'kaasctl
// help TOPIC' (names, in order) with its summary; the page is a
// template, so a summary's {{ and }} are spaced apart.
func HelpTopicsSection(names []string, summary func(string) string) string {
	var b strings.Builder
	b.WriteString("\nHELP TOPICS (kaasctl help TOPIC; kaasctl help COMMAND for a command):\n")
	for _, n := range names {
		fmt.Fprintf(&b, "   %-12s %s\n", n, strings.NewReplacer("{{", "{ {", "}}", "} }").Replace(summary(n)))
	}
	return b.String()
}
