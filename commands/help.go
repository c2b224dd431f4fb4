package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// helpTopics are the pages of 'kaasctl help TOPIC'. Other files add
// theirs from init().
var helpTopics = map[string]helpTopic{}

type helpTopic struct {
	Summary string
	Text    string
	// Gen builds the text when asked (for pages generated from types).
	Gen func() string
}

func addHelpTopic(name, summary, text string) {
	helpTopics[name] = helpTopic{Summary: summary, Text: strings.TrimLeft(text, "\n")}
}

func addHelpTopicFunc(name, summary string, gen func() string) {
	helpTopics[name] = helpTopic{Summary: summary, Gen: gen}
}

func init() {
	addHelpTopic("exit-codes", "what kaasctl's exit codes mean", `
kaasctl exit codes

  0  ok: the command did what was asked and found nothing wrong
  1  error: something failed (a file could not be read or parsed, a broker did not answer,
     a per-item operation failed); the message on stderr names the file or broker and why
  2  usage: the command line is wrong (unknown command or flag, missing argument,
     conflicting flags); nothing was read or written
  3  problems found: the command ran to the end and reports problems:
       volume check, doctor      findings of error severity
       volume repair             conflicts it leaves to a person (a group with different
                                 offsets in both layouts), in a dry run as with --execute;
                                 a dry run with only changes to make exits 0
       config show / check       configuration problems / seed brokers that did not answer
       assignment diff           --exit-code: differences, or entries against the hash tier
       whois --live --exit-code  keys whose volume and broker answers disagree
       offsets delete            a deleted offset a broker still serves from its cache
       groups health             a group that is not OK (any condition but OK)
       probe                     a broker that failed the probe (the step is named)
       plan restart --follow     a version that deviated from the plan
       groups prune --execute    a pruned offset a coordinator still serves from memory, or a
                                 pruned group a broker still lists (the broker is named)
  4  refused for safety: kaasctl would not act (e.g. an offsets reset on a group that is
     not Empty or Dead, or whose brokers' offsets for a time contradict the records);
     nothing was written for that group. offsets reset and delete handle groups one by
     one, as Kafka's tool does: the other groups of the run are still written, and the
     run exits 4 if any group was refused. groups prune exits 4 when a selected group or
     row is refused (live, loaded by its coordinator, evidence that cannot tell), and
     when a plan selects more groups than --max-groups (then nothing is written)

Any failure of a single item (one group, one partition, one file) makes the whole run
non-zero, and machine output (-o json/jsonl/yaml/csv) stays valid on partial failure.
`)
	register(newHelpCmd)
}

func newHelpCmd() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show help for a command, or a topic: " + strings.Join(topicNames(), ", "),
		ArgsUsage: "[TOPIC | COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return cli.ShowAppHelp(c)
			}
			if args[0] == "formats" && len(args) > 1 {
				text, err := helpFormatsFor(c.App.Commands, args[1:])
				if err != nil {
					return err
				}
				fmt.Fprint(c.App.Writer, text)
				return nil
			}
			if t, ok := helpTopics[args[0]]; ok && len(args) == 1 {
				text := t.Text
				if t.Gen != nil {
					text = t.Gen()
				}
				fmt.Fprint(c.App.Writer, text)
				return nil
			}
			cmds := c.App.Commands
			var path []string
			var cmd *cli.Command
			for _, a := range args {
				cmd = findCommand(cmds, a)
				if cmd == nil {
					cands := commandNames(cmds)
					if len(path) == 0 {
						cands = append(cands, topicNames()...)
					}
					if s := suggest(a, cands); s != "" {
						return exit.UsageErrorf("no help topic or command %q; did you mean %q? Topics: %s", strings.Join(append(path, a), " "), strings.Join(append(path, s), " "), strings.Join(topicNames(), ", "))
					}
					return exit.UsageErrorf("no help topic or command %q; topics: %s", strings.Join(append(path, a), " "), strings.Join(topicNames(), ", "))
				}
				path = append(path, cmd.Name)
				cmds = cmd.Subcommands
			}
			// Re-run the command with --help so urfave prints its page with
			// the right lineage.
			return c.App.Run(append(append([]string{c.App.Name}, path...), "--help"))
		},
	}
}

// helpTopicsSection ends the app's help page: every topic of 'kaasctl
// help TOPIC' with its summary.
func helpTopicsSection() string {
	var b strings.Builder
	b.WriteString("\nHELP TOPICS (kaasctl help TOPIC; kaasctl help COMMAND for a command):\n")
	for _, n := range topicNames() {
		fmt.Fprintf(&b, "   %-12s %s\n", n, strings.NewReplacer("{{", "{ {", "}}", "} }").Replace(helpTopics[n].Summary))
	}
	return b.String()
}

func topicNames() []string {
	var ns []string
	for n := range helpTopics {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}
