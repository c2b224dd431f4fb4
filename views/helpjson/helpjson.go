// Package helpjson is 'kaasctl --help-json': the command tree as JSON, for
// tools and agents: every command with its flags (type, default,
// environment variables, profile key), exit codes and machine documents,
// walked from the tree the app builds: the same registration the help
// text comes from. 'kaasctl groups --help-json' is one subtree.
package helpjson

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/views"
)

// Flag is the flag that asks for the document.
const Flag = "help-json"

// Tree is what the document reads besides the app's commands.
type Tree struct {
	// Common are the common flags the app attaches to its commands.
	Common []cli.Flag
	// OutputFlag, NoColorFlag and LogDirsFlag name the common flags -o,
	// --no-color and --log-dirs.
	OutputFlag, NoColorFlag, LogDirsFlag string
	// OwnEnv are the environment variables of commands' own flags.
	OwnEnv map[string]string
	// Documents are the machine documents of the command at path.
	Documents func(path string) []views.HelpDocument
	// ExitCodes are the exit codes the command at path can end with.
	ExitCodes func(path string) []int
}

// Request reports whether args ask for --help-json, and of which command
// path.
func Request(app *cli.App, args []string) ([]string, bool) {
	asked := false
	rewritten := slices.Clone(args)
	for i, a := range rewritten {
		if a == "--" {
			break
		}
		if a == "--"+Flag {
			asked, rewritten[i] = true, "--help"
		}
	}
	if !asked {
		return nil, false
	}
	path, ok := completion.HelpRequest(app.Commands, rewritten)
	return path, ok
}

// Write writes the tree of the command at path (the whole tree when
// empty).
func (tr Tree) Write(app *cli.App, w io.Writer, path []string) error {
	t := views.HelpTree{Name: app.Name, Version: app.Version, Usage: app.Usage, Description: app.Description,
		Path: strings.Join(path, " "), ExitCodes: views.ExitCodeDocs, OutputFormats: views.OutputFormatDocs(), Environment: tr.environment()}
	cmds := app.Commands
	var parents []string
	for _, name := range path {
		c := completion.FindCommand(cmds, name)
		if c == nil {
			return fmt.Errorf("--help-json: no command %q", strings.Join(append(parents, name), " "))
		}
		if len(parents) == len(path)-1 {
			cmds = []*cli.Command{c}
			break
		}
		parents, cmds = append(parents, c.Name), c.Subcommands
	}
	for _, c := range cmds {
		if c.Name == "help" && len(parents) > 0 {
			continue
		}
		t.Commands = append(t.Commands, tr.command(c, parents))
	}
	return render.WriteDocument(w, t, true, render.SchemaVersionOf(t))
}

// command is c (under parents) and its sub-commands; the help
// sub-command every parent and leaf gets is left out.
func (tr Tree) command(c *cli.Command, parents []string) views.HelpCommand {
	path := strings.Join(append(slices.Clone(parents), c.Name), " ")
	hc := views.HelpCommand{Name: c.Name, Path: path, Aliases: c.Aliases, Usage: c.Usage, ArgsUsage: c.ArgsUsage,
		Description: c.Description, Hidden: c.Hidden, Runnable: completion.IsLeaf(c), Flags: []views.HelpFlag{},
		ExitCodes: []int{}, OutputFormats: []string{}, Documents: tr.Documents(path), Subcommands: []views.HelpCommand{}}
	common := map[string]bool{}
	for _, f := range tr.Common {
		common[completion.FlagName(f)] = true
	}
	for _, f := range c.Flags {
		hf := tr.flag(f, common[completion.FlagName(f)])
		hc.Flags = append(hc.Flags, hf)
		if hf.Name == tr.OutputFlag && !hf.Hidden {
			for _, ft := range render.Formats {
				hc.OutputFormats = append(hc.OutputFormats, string(ft))
			}
		}
	}
	if hc.Runnable {
		hc.ExitCodes = tr.ExitCodes(path)
	}
	for _, s := range c.Subcommands {
		if s.Name == "help" {
			continue
		}
		hc.Subcommands = append(hc.Subcommands, tr.command(s, append(slices.Clone(parents), c.Name)))
	}
	return hc
}

// flag describes one flag.
func (tr Tree) flag(f cli.Flag, common bool) views.HelpFlag {
	names := f.Names()
	hf := views.HelpFlag{Name: names[0], Aliases: slices.Clone(names[1:]), Type: tr.typeName(f), Common: common, Env: []string{}}
	if d, ok := f.(cli.DocGenerationFlag); ok {
		hf.TakesValue = d.TakesValue()
		hf.Placeholder, hf.Usage = views.UnquoteUsage(d.GetUsage())
		hf.Default = flagDefault(f, d)
		hf.Env = append(hf.Env, d.GetEnvVars()...)
	}
	if s, ok := f.(cli.DocGenerationSliceFlag); ok {
		hf.Repeatable = s.IsSliceFlag()
	}
	if g, ok := f.(*cli.GenericFlag); ok {
		hf.Repeatable = completion.GenericKind(g.Value) == "stringList"
	}
	if c, ok := f.(cli.CategorizableFlag); ok {
		hf.Category, hf.Hidden = c.GetCategory(), !c.IsVisible()
	}
	if e, ok := tr.OwnEnv[hf.Name]; ok && !common {
		hf.Env = append(hf.Env, e)
	}
	if common {
		if s, ok := tr.settings()[hf.Name]; ok {
			hf.Env = append(hf.Env, s.env...)
			hf.ProfileKey = s.profile
		}
	}
	return hf
}

// typeName names a flag's type.
func (tr Tree) typeName(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return "bool"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "int"
	case *cli.StringSliceFlag:
		return "stringList"
	case *cli.GenericFlag:
		if k := completion.GenericKind(f.Value); k != "" {
			return k
		}
	}
	return "string"
}

// flagDefault is a flag's default value ("" when none), or the text a
// flag gives for it (DefaultText).
func flagDefault(f cli.Flag, d cli.DocGenerationFlag) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return strconv.FormatBool(f.Value)
	case *cli.StringSliceFlag:
		if f.Value == nil {
			return ""
		}
		return strings.Join(f.Value.Value(), ",")
	case *cli.StringFlag:
		if f.DefaultText != "" {
			return f.DefaultText
		}
		return f.Value
	}
	return d.GetValue()
}

// flagSetting is what else sets a common flag: environment variables and
// the profile key.
type flagSetting struct {
	env     []string
	profile string
}

// settings are the environment variables and profile keys of
// the common flags, from the tables that resolve them: the volume's
// (volume.ResolveInput's sources) and the connection's (wire's keys).
func (tr Tree) settings() map[string]flagSetting {
	// --log-dirs has no profile key: volume.ResolveInput reads
	// KAAS_LOG_DIRS beside it (the commands' common flags).
	m := map[string]flagSetting{tr.NoColorFlag: {env: []string{"NO_COLOR"}}, tr.LogDirsFlag: {env: []string{"KAAS_LOG_DIRS"}}}
	var in volume.ResolveInput
	for _, gs := range [][]volume.Given{in.DataDirs(), in.ClusterDirs(), in.KaasVersions()} {
		var s flagSetting
		name := ""
		for _, g := range gs {
			switch g.Origin {
			case volume.OriginFlag:
				name = strings.TrimPrefix(g.From, "--")
			case volume.OriginEnv:
				s.env = append(s.env, g.From)
			case volume.OriginProfile:
				s.profile = strings.TrimPrefix(g.From, "profile ")
			}
		}
		m[name] = s
	}
	for _, k := range append([]string{wire.KeyProfile, wire.KeyConfig}, wire.ConnectionKeys...) {
		m[k] = flagSetting{env: []string{wire.EnvName(k)}, profile: wire.ProfileKey(k)}
	}
	return m
}

// environment lists every environment variable of the common flags,
// and the others kaasctl reads.
func (tr Tree) environment() []views.HelpEnv {
	var out []views.HelpEnv
	settings := tr.settings()
	for _, f := range tr.Common {
		name := completion.FlagName(f)
		for _, e := range settings[name].env {
			usage := ""
			if d, ok := f.(cli.DocGenerationFlag); ok {
				_, usage = views.UnquoteUsage(d.GetUsage())
			}
			out = append(out, views.HelpEnv{Name: e, Flag: name, Usage: usage})
		}
	}
	for flag, env := range tr.OwnEnv {
		out = append(out, views.HelpEnv{Name: env, Flag: flag, Usage: "the default of --" + flag + " where a command takes it"})
	}
	return append(out, views.HelpEnv{Name: wire.DefaultPasswordEnv, Usage: "the SASL password, when neither --sasl-password-env nor --sasl-password-file names another source"},
		views.HelpEnv{Name: "TERM", Usage: "dumb: no colour"},
		views.HelpEnv{Name: "XDG_CONFIG_HOME", Usage: "the config file is $XDG_CONFIG_HOME/kaasctl/config.yaml (else ~/.config/kaasctl/config.yaml, from HOME)"})
}
