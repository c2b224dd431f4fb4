package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/views"
)

// helpTopics are the pages of 'kaasctl help TOPIC'. Other files add
// theirs from init().
var helpTopics = map[string]helpTopic{}

type helpTopic struct {
	Summary string
	// Gen builds the text when asked: internal/helptext's page of the
	// topic, or a page generated from types.
	Gen func() string
}

// addHelpTopic adds the topic whose page is internal/helptext's
// topics/NAME.txt (vars fill its placeholders).
func addHelpTopic(name, summary string, vars helptext.Vars) {
	helpTopics[name] = helpTopic{Summary: summary, Gen: func() string { return helptext.Topic(name, vars) }}
}

func addHelpTopicFunc(name, summary string, gen func() string) {
	helpTopics[name] = helpTopic{Summary: summary, Gen: gen}
}

func init() {
	addHelpTopicFunc("exit-codes", "what kaasctl's exit codes mean", func() string { return views.ExitCodesHelp(exitProblems()) })
	register(Descriptor{Path: "help", Aliases: []string{"h"}, Build: newHelpCmd})
}

func newHelpCmd() *cli.Command {
	return &cli.Command{
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
				fmt.Fprint(c.App.Writer, t.Gen())
				return nil
			}
			path, err := completion.HelpPath(c.App.Commands, args, topicNames())
			if err != nil {
				return err
			}
			// Re-run the command with --help so urfave prints its page with
			// the right lineage.
			return c.App.Run(append(append([]string{c.App.Name}, path...), "--help"))
		},
	}
}

// helpTopicsSection ends the app's help page: every topic of 'kaasctl
// help TOPIC' with its summary (views.HelpTopicsSection).
func helpTopicsSection() string {
	return views.HelpTopicsSection(topicNames(), func(n string) string { return helpTopics[n].Summary })
}

func topicNames() []string {
	var ns []string
	for n := range helpTopics {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}
