package completion

import (
	"fmt"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/urfave/cli/v2"
)

// The words that name no command: "did you mean" for a mistyped
// command, in the command line and in kaasctl help.

// UnknownCommand is the usage error for a word that names no command under
// parent ("" for the top level), with the closest command when one is near.
func UnknownCommand(word, parent string, cmds []*cli.Command) error {
	where, helpCmd := "", "kaasctl --help"
	if parent != "" {
		where = " for 'kaasctl " + parent + "'"
		helpCmd = "kaasctl " + parent + " --help"
	}
	msg := fmt.Sprintf("unknown command %q%s", word, where)
	if s := Suggest(word, CommandNames(cmds)); s != "" {
		return exit.UsageErrorf("%s; did you mean %q? Run '%s' for the list", msg, strings.Join(strings.Fields("kaasctl "+parent+" "+s), " "), helpCmd)
	}
	return exit.UsageErrorf("%s; run '%s' for the list", msg, helpCmd)
}

// HelpPath is the command path the words of 'kaasctl help WORD...' name,
// or the usage error for the first word that names no command (with the
// closest command, or help topic for the first word, when one is near).
func HelpPath(cmds []*cli.Command, args, topics []string) ([]string, error) {
	path, bad, near, ok := WalkPath(cmds, args, topics)
	if ok {
		return path, nil
	}
	if near != "" {
		return nil, exit.UsageErrorf("no help topic or command %q; did you mean %q? Topics: %s", strings.Join(append(path, bad), " "), strings.Join(append(path, near), " "), strings.Join(topics, ", "))
	}
	return nil, exit.UsageErrorf("no help topic or command %q; topics: %s", strings.Join(append(path, bad), " "), strings.Join(topics, ", "))
}

// WalkPath follows the words down the command tree: ok, the command path
// they name; else the path up to the first word that names no command,
// that word, and the closest name there (the commands, and top's names
// for the first word; "" when none is near).
func WalkPath(cmds []*cli.Command, args, top []string) (path []string, bad, near string, ok bool) {
	for _, a := range args {
		cmd := FindCommand(cmds, a)
		if cmd == nil {
			cands := CommandNames(cmds)
			if len(path) == 0 {
				cands = append(cands, top...)
			}
			return path, a, Suggest(a, cands), false
		}
		path = append(path, cmd.Name)
		cmds = cmd.Subcommands
	}
	return path, "", "", true
}
