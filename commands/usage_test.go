package commands

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"
)

// A new user's first commands: --help and -h anywhere, exit 0, on stdout.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string // the NAME line of the page
	}{
		{[]string{"--help"}, "kaasctl - operate kaas consumer groups"},
		{[]string{"-h"}, "kaasctl - operate kaas consumer groups"},
		{[]string{"help"}, "kaasctl - operate kaas consumer groups"},
		{[]string{"groups", "--help"}, "kaasctl groups - consumer groups"},
		{[]string{"groups", "-h"}, "kaasctl groups - consumer groups"},
		{[]string{"groups", "describe", "orders-app", "--help"}, "kaasctl groups describe - "},
		{[]string{"groups", "describe", "--help", "orders-app"}, "kaasctl groups describe - "},
		{[]string{"groups", "describe", "-o", "json", "orders-app", "-h"}, "kaasctl groups describe - "},
		{[]string{"-h", "groups", "describe"}, "kaasctl groups describe - "},
		{[]string{"--help", "whois", "g1"}, "kaasctl whois-coordinator - "},
		{[]string{"whois", "--data-dir", "/nowhere", "g1", "-h"}, "kaasctl whois-coordinator - "},
		{[]string{"offsets", "reset", "g1", "--to-earliest", "--help"}, "kaasctl offsets reset - "},
		{[]string{"help", "groups", "describe"}, "kaasctl groups describe - "},
		{[]string{"help", "--help"}, "kaasctl help - "},
		{[]string{"version", "--help"}, "kaasctl version - "},
		{[]string{"config", "check", "prod", "-h"}, "kaasctl config check - "},
	} {
		r := runCLI(t, "", nil, c.args...)
		if r.Code != 0 || r.Err != "" || !strings.HasPrefix(r.Out, "NAME:\n") || !strings.Contains(r.Out, c.want) {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", c.args, r.Code, r.Err, r.Out)
		}
	}
	// The app's page lists the help topics too.
	if r := runCLI(t, "", nil, "--help"); !strings.Contains(r.Out, "HELP TOPICS") || !strings.Contains(r.Out, "exit-codes") {
		t.Errorf("--help lacks the topics:\n%s", r.Out)
	}
	// After "--" a -h is an argument, not a request for help.
	if r := runCLI(t, "", nil, "whois", "--data-dir", "/nowhere", "--", "-h"); r.Code == 0 || strings.HasPrefix(r.Out, "NAME:") {
		t.Errorf("-h after --: %d %q", r.Code, r.Out)
	}
}

// A typo gets the closest command or flag, spelt as the user types it.
func TestSuggestions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"grups"}, `unknown command "grups"; did you mean "kaasctl groups"?`},
		{[]string{"grups", "--help"}, `did you mean "kaasctl groups"?`},
		{[]string{"groups", "lsit"}, `unknown command "lsit" for 'kaasctl groups'; did you mean "kaasctl groups list"?`},
		{[]string{"assignmnet", "show"}, `did you mean "kaasctl assignment"?`},
		{[]string{"groups", "list", "--data-dri", "/x"}, "unknown flag --data-dri; did you mean --data-dir?"},
		{[]string{"offsets", "reset", "g1", "--exectue"}, "unknown flag --exectue; did you mean --execute?"},
		{[]string{"whois", "--ouptut", "json", "g"}, "unknown flag --ouptut; did you mean --output?"},
		{[]string{"watch", "--count", "x"}, `invalid value "x" for flag --count`},
		{[]string{"version", "-o"}, "flag needs an argument: -o"},
		{[]string{"help", "exit-code"}, `did you mean "exit-codes"?`},
		{[]string{"help", "groups", "lsit"}, `did you mean "groups list"?`},
	} {
		r := runCLI(t, "", nil, c.args...)
		if r.Code != 2 || r.Out != "" || !strings.Contains(r.Err, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, r.Code, r.Out, r.Err, c.want)
		}
		// Never Go's single-dash spelling of a long flag.
		for _, bad := range []string{" -data-dri", " -exectue", " -ouptut", " -count"} {
			if strings.Contains(r.Err, bad) {
				t.Errorf("%v: %q spells a flag with one dash", c.args, r.Err)
			}
		}
	}
	// Nothing close: no guess.
	r := runCLI(t, "", nil, "xyzzy")
	if r.Code != 2 || strings.Contains(r.Err, "did you mean") || !strings.Contains(r.Err, "kaasctl --help") {
		t.Errorf("xyzzy: %d %q", r.Code, r.Err)
	}
	r = runCLI(t, "", nil, "groups", "list", "--zzzzzz")
	if r.Code != 2 || strings.Contains(r.Err, "did you mean") || !strings.Contains(r.Err, "'kaasctl groups list --help'") {
		t.Errorf("--zzzzzz: %d %q", r.Code, r.Err)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	cands := []string{"groups", "list", "ls", "describe", "data-dir", "cluster-dir", "execute", "dry-run"}
	for typed, want := range map[string]string{
		"grups": "groups", "gruops": "groups", "lsit": "list", "descirbe": "describe", "data-dri": "data-dir",
		"exectue": "execute", "dryrun": "dry-run", "descr": "describe", "zzz": "", "l": "", "x": "",
	} {
		if got := completion.Suggest(typed, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", typed, got, want)
		}
	}
}

// leafCommands lists every visible leaf command's path.
func leafCommands(cmds []*cli.Command, parent []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		p := append(append([]string(nil), parent...), c.Name)
		if !completion.IsLeaf(c) {
			out = append(out, leafCommands(c.Subcommands, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// Each command's help lists only the flags that apply: commands that never
// talk to brokers show no connection, TLS or SASL flags.
func TestHelpFlagCategories(t *testing.T) {
	t.Parallel()
	app := NewApp(&IOStreams{})
	leaves := leafCommands(app.Commands, nil)
	if len(leaves) < 20 {
		t.Fatalf("only %d commands found", len(leaves))
	}
	for _, path := range leaves {
		r := runCLI(t, "", nil, append(path, "--help")...)
		if r.Code != 0 {
			t.Errorf("%v --help: exit %d %s", path, r.Code, r.Err)
			continue
		}
		live := flagGroupsOf(path)&fgBrokers != 0
		for _, flag := range []string{"--sasl-mechanism", "--tls-ca", "--max-versions"} {
			if got := strings.Contains(r.Out, flag); got != live {
				t.Errorf("%v: help mentions %s = %v, want %v", path, flag, got, live)
			}
		}
		if live && !strings.Contains(r.Out, "   SASL\n") {
			t.Errorf("%v: no SASL heading", path)
		}
	}
	for _, path := range [][]string{{"version"}, {"completion"}, {"assignment", "show"}, {"assignment", "diff"},
		{"txn", "list"}, {"txn", "describe"}, {"takeover", "trace"}, {"volume", "check"}, {"volume", "repair"}, {"sandbox"}} {
		r := runCLI(t, "", nil, append(path, "--help")...)
		if strings.Contains(r.Out, "--sasl") || strings.Contains(r.Out, "--tls") || strings.Contains(r.Out, "KAASCTL_BROKERS") {
			t.Errorf("%v: offline command lists connection flags:\n%s", path, r.Out)
		}
	}
	// watch --offsets with brokers follows the groups' membership too.
	for _, path := range [][]string{{"groups", "list"}, {"groups", "describe"}, {"whois"}, {"doctor"}, {"offsets", "reset"}, {"offsets", "delete"}, {"config", "check"}, {"watch"}} {
		if r := runCLI(t, "", nil, append(path, "--help")...); !strings.Contains(r.Out, "--brokers") || !strings.Contains(r.Out, "--sasl-user") {
			t.Errorf("%v: live command lacks connection flags", path)
		}
	}
	// --kaas-version is a volume flag: every command that reads offset files
	// lists it (volume check's own text says "pin it with --kaas-version"),
	// and the sandbox, for the generation it emulates; the assignment-only
	// ones do not.
	for _, path := range [][]string{{"volume", "check"}, {"volume", "repair"}, {"volume", "migrate"}, {"watch"},
		{"groups", "list"}, {"groups", "describe"}, {"offsets", "reset"}, {"offsets", "history"}, {"doctor"}, {"exporter"}, {"sandbox"}} {
		if r := runCLI(t, "", nil, append(path, "--help")...); !strings.Contains(r.Out, "--kaas-version VERSION") {
			t.Errorf("%v: help lacks --kaas-version:\n%s", path, r.Out)
		}
	}
	for _, path := range [][]string{{"assignment", "show"}, {"txn", "list"}, {"takeover", "trace"}, {"version"}} {
		if r := runCLI(t, "", nil, append(path, "--help")...); strings.Contains(r.Out, "--kaas-version") {
			t.Errorf("%v: help lists --kaas-version, which it does not use", path)
		}
	}
	// volume migrate refuses while a --brokers address answers: it lists
	// --brokers and --timeout, not TLS or SASL (it only dials).
	if r := runCLI(t, "", nil, "volume", "migrate", "--help"); !strings.Contains(r.Out, "--brokers") || !strings.Contains(r.Out, "--timeout") || strings.Contains(r.Out, "--sasl") {
		t.Errorf("volume migrate --help:\n%s", r.Out)
	}
	// The short pages stay short.
	if r := runCLI(t, "", nil, "version", "--help"); len(r.Out) > 1000 || strings.Contains(r.Out, "--data-dir") {
		t.Errorf("version --help is %d bytes:\n%s", len(r.Out), r.Out)
	}
	if r := runCLI(t, "", nil, "completion", "--help"); strings.Contains(r.Out, "--output") {
		t.Errorf("completion lists -o:\n%s", r.Out)
	}
	// An offline command still accepts the connection flags (hidden), so
	// one KAASCTL_ARGS serves every command, and completion does not offer them.
	data := hostileVolume(t, "g1")
	for _, args := range [][]string{
		{"assignment", "show", "--data-dir", data, "--brokers", "k:9092", "--sasl-user", "u"},
		{"version", "--brokers", "k:9092", "--data-dir", data},
	} {
		if r := runCLI(t, "", nil, args...); r.Code != 0 {
			t.Errorf("%v: %d %q", args, r.Code, r.Err)
		}
	}
	if r := runCLI(t, "", nil, "__complete", "txn", "list", "--"); strings.Contains(r.Out, "--sasl") || !strings.Contains(r.Out, "--data-dir") {
		t.Errorf("completion of txn list flags:\n%s", r.Out)
	}
}

// A common flag typed before the command (kaasctl -q groups list) says
// where it goes instead of "unknown flag".
func TestCommonFlagBeforeCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-q", "groups", "list"}, {"-o", "json", "whois", "g"}, {"--data-dir", "/x", "volume", "check"}} {
		r := runCLI(t, "", nil, args...)
		if r.Code != 2 || !strings.Contains(r.Err, "go after the command name") || !strings.Contains(r.Err, completion.Dashed(strings.TrimLeft(args[0], "-"))) {
			t.Errorf("%v: exit %d %q", args, r.Code, r.Err)
		}
	}
	if r := runCLI(t, "", nil, "--bogus", "whois"); r.Code != 2 || strings.Contains(r.Err, "go after the command name") {
		t.Errorf("--bogus: exit %d %q", r.Code, r.Err)
	}
}

// -v has one meaning, --verbose, on every command: a leading -v no longer
// prints the version and drops the command; --version still prints it.
func TestLeadingVIsVerbose(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-v", "groups", "list"}, {"-v"}} {
		r := runCLI(t, "", nil, args...)
		if r.Code != 2 || strings.Contains(r.Out, "version") || !strings.Contains(r.Err, "-v is --verbose") || !strings.Contains(r.Err, "kaasctl COMMAND ... -v") {
			t.Errorf("%v: exit %d\n%s\n%s", args, r.Code, r.Out, r.Err)
		}
	}
	if r := runCLI(t, "", nil, "--version"); r.Code != 0 || !strings.Contains(r.Out, "kaasctl version") {
		t.Errorf("--version: exit %d %q %q", r.Code, r.Out, r.Err)
	}
	if r := runCLI(t, "", nil, "version", "-v"); r.Code != 0 {
		t.Errorf("version -v: exit %d %q", r.Code, r.Err)
	}
}

func TestSandboxBrokersRenamed(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"sandbox", "--brokers", "5"}, {"sandbox", "-b", "5"}} {
		r := runCLI(t, "", nil, args...)
		if r.Code != 2 || !strings.Contains(r.Err, "--broker-count N (-n N)") || !strings.Contains(r.Err, "host:port") {
			t.Errorf("%v: %d %q", args, r.Code, r.Err)
		}
	}
	r := runCLI(t, "", nil, "sandbox", "--help")
	if !strings.Contains(r.Out, "--broker-count value, -n value") || strings.Contains(r.Out, "--brokers") {
		t.Errorf("sandbox help:\n%s", r.Out)
	}
}

func TestExitCodesTopicListsRepair(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "help", "exit-codes")
	for _, want := range []string{"volume repair", "dry run", "config show / check", "whois --live --exit-code", "groups health", "probe", "plan restart --follow"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("help exit-codes lacks %q", want)
		}
	}
}

// hostileVolume is a volume whose offset files are named by hostile and
// long group ids.
func hostileVolume(t *testing.T, ids ...string) string {
	t.Helper()
	data := t.TempDir()
	writeFile(t, data, "__cluster/assignment.json",
		`{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"}],"partitions":[]}`)
	for _, id := range ids {
		writeFile(t, data, filepath.Join("__cluster/__consumer_offsets", id+".json"), `{"offsets":{"orders/0":5}}`)
	}
	return data
}

const (
	escID    = "evil\x1b]0;pwned\x07\x1b[2J\u202egnp.exe\u0085"
	badUTFID = "bad\xff\xfeid"
)

// longID is 81 bytes.
var longID = "com.example.payments.settlement.reconciliation.consumer-group.eu-west-1.prod-0042"

func TestIdsWholeInMachineOutput(t *testing.T) {
	t.Parallel()
	if len(longID) != 81 {
		t.Fatalf("longID is %d bytes", len(longID))
	}
	data := hostileVolume(t, longID, escID, badUTFID, "plain")
	run := func(args ...string) cliResult {
		t.Helper()
		r := runCLI(t, "", nil, append([]string{"groups", "list", "--data-dir", data}, args...)...)
		if r.Code != 0 && r.Code != 3 {
			t.Fatalf("%v: exit %d %s", args, r.Code, r.Err)
		}
		return r
	}
	// csv: every id byte for byte.
	recs, err := csv.NewReader(strings.NewReader(run("-o", "csv").Out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, rec := range recs[1:] {
		got[rec[0]] = true
	}
	for _, id := range []string{longID, escID, badUTFID, "plain"} {
		if !got[id] {
			t.Errorf("csv lacks %q: %v", id, got)
		}
	}
	// wide: the long id whole; table: shortened with its length.
	if out := run("-o", "wide").Out; !strings.Contains(out, longID) || strings.Contains(out, "(81 bytes)") {
		t.Errorf("wide cut the id:\n%s", out)
	}
	if out := run().Out; !strings.Contains(out, "…(81 bytes)") {
		t.Errorf("table did not shorten the long id:\n%s", out)
	}
	// json, jsonl, yaml: the exact bytes come back.
	var doc struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal([]byte(run("-o", "json").Out), &doc); err != nil {
		t.Fatal(err)
	}
	checkIDs := func(format string, objs []map[string]any) {
		t.Helper()
		seen := map[string]bool{}
		for _, o := range objs {
			id, _ := o["group"].(string)
			if b64, ok := o["groupBase64"].(string); ok {
				raw, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					t.Fatalf("%s: groupBase64 %q: %v", format, b64, err)
				}
				if !strings.Contains(id, "\ufffd") {
					t.Errorf("%s: group %q beside groupBase64 is not the lossy form", format, id)
				}
				id = string(raw)
			}
			seen[id] = true
		}
		for _, id := range []string{longID, escID, badUTFID, "plain"} {
			if !seen[id] {
				t.Errorf("%s: %q not carried exactly: %v", format, id, seen)
			}
		}
	}
	checkIDs("json", doc.Groups)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(run("-o", "jsonl").Out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, o)
	}
	checkIDs("jsonl", lines)
	var ydoc struct {
		Groups []map[string]any `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(run("-o", "yaml").Out), &ydoc); err != nil {
		t.Fatal(err)
	}
	checkIDs("yaml", ydoc.Groups)
	// Valid ids never get a base64 field.
	for _, o := range doc.Groups {
		if _, ok := o["groupBase64"]; ok && o["group"] != "bad\ufffd\ufffdid" {
			t.Errorf("groupBase64 on %q", o["group"])
		}
	}
}

// assertHumanSafe fails when text would drive a terminal.
func assertHumanSafe(t *testing.T, what, text string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u0085", "\xff"} {
		if strings.Contains(text, bad) {
			t.Errorf("%s carries %q:\n%q", what, bad, text)
		}
	}
}

func TestHumanOutputNeutralised(t *testing.T) {
	t.Parallel()
	data := hostileVolume(t, escID, badUTFID)
	for _, args := range [][]string{
		{"groups", "list", "--data-dir", data},
		{"groups", "list", "--data-dir", data, "-o", "wide"},
		{"groups", "describe", "--data-dir", data, "--all"},
		{"groups", "describe", "--data-dir", data, escID},
		{"whois", "--data-dir", data, escID, badUTFID},
		{"whois", "--data-dir", data, "-o", "wide", escID},
		{"volume", "check", "--data-dir", data},
		{"groups", "describe", "--data-dir", data, "missing\x1b[31m\u202e"},
		{"offsets", "reset", "--data-dir", data, "--to-earliest", escID + "-none"},
	} {
		r := runCLI(t, "", nil, args...)
		assertHumanSafe(t, fmt.Sprintf("%q stdout", args), r.Out)
		assertHumanSafe(t, fmt.Sprintf("%q stderr", args), r.Err)
	}
	r := runCLI(t, "", nil, "groups", "list", "--data-dir", data)
	if !strings.Contains(r.Out, `evil\x1b]0;pwned\x07\x1b[2J\u202egnp.exe\u0085`) {
		t.Errorf("the hostile id is not shown escaped:\n%s", r.Out)
	}
	// An unknown command that is itself hostile.
	r = runCLI(t, "", nil, "gr\x1b[2Jups")
	assertHumanSafe(t, "unknown command", r.Err)
	// Completion candidates.
	r = runCLI(t, "", nil, "__complete", "groups", "describe", "--data-dir", data, "")
	assertHumanSafe(t, "completion", r.Out)
	if !strings.Contains(r.Out, `evil\x1b]0;pwned`) {
		t.Errorf("completion lost the group:\n%q", r.Out)
	}
}

// On a terminal, colour reaches the screen as plain SGR sequences (never
// the printer's internal mark), and a name's own escapes stay escaped.
func TestColourOnTerminal(t *testing.T) {
	t.Parallel()
	data := hostileVolume(t, escID)
	hist := filepath.Join(trLabCopy, "assignment-history")
	for _, args := range [][]string{
		{"watch", "--data-dir", data, "--once", "-g", escID},
		{"watch", "--data-dir", data, "--count", "1", "--poll-only", "-g", escID},
		{"takeover", "trace", hist},
		{"assignment", "show", "--data-dir", data},
	} {
		var out, errb strings.Builder
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, OutTTY: true, Getenv: func(string) string { return "" }}
		if code := Main(append([]string{"kaasctl"}, args...), ios); code != 0 {
			t.Fatalf("%q: exit %d %s", args, code, errb.String())
		}
		s := out.String()
		if strings.Contains(s, "\x1b{") || !strings.Contains(s, "\x1b[") {
			t.Errorf("%q: colour not as SGR:\n%q", args, s)
		}
		if strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\u202e") {
			t.Errorf("%q: a name's escape reached the terminal:\n%q", args, s)
		}
	}
}

// helpRequest and the suggestion path read any command line without
// panicking, and a help request always names a real command path.
func FuzzHelpRequest(f *testing.F) {
	for _, s := range []string{"--help", "groups describe g1 -h", "-h groups", "grups --help", "whois -- -h", "__complete groups -h", "offsets reset --group -h", "help --help"} {
		f.Add(s)
	}
	app := NewApp(&IOStreams{})
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{"kaasctl"}, strings.Fields(line)...)
		path, ok := completion.HelpRequest(app.Commands, args)
		if !ok {
			return
		}
		cmds := app.Commands
		for _, p := range path {
			c := completion.FindCommand(cmds, p)
			if c == nil {
				t.Fatalf("%q: help path %v names no command", line, path)
			}
			cmds = c.Subcommands
		}
		for _, w := range strings.Fields(line) {
			completion.Suggest(w, completion.CommandNames(app.Commands))
		}
	})
}

// A data dir given as --cluster-dir is an error naming both right
// spellings, never an empty, healthy cluster.
func TestClusterDirIsDataDir(t *testing.T) {
	t.Parallel()
	data := hostileVolume(t, "orders-app")
	for _, args := range [][]string{
		{"groups", "list", "--cluster-dir", data},
		{"volume", "check", "--cluster-dir", data},
		{"whois", "--cluster-dir", data, "orders-app"},
	} {
		r := runCLI(t, "", nil, args...)
		if r.Code == 0 || !strings.Contains(r.Err, "is a kaas data dir, not a cluster dir") ||
			!strings.Contains(r.Err, "--data-dir "+data) || !strings.Contains(r.Err, "--cluster-dir "+filepath.Join(data, "__cluster")) {
			t.Errorf("%v: exit %d, stderr %q", args, r.Code, r.Err)
		}
	}
	r := runCLI(t, "", map[string]string{"KAAS_CLUSTER_DIR": data}, "groups", "list")
	if r.Code == 0 || !strings.Contains(r.Err, "from KAAS_CLUSTER_DIR") {
		t.Errorf("KAAS_CLUSTER_DIR=data dir: %d %q", r.Code, r.Err)
	}
	// The right spellings work.
	for _, args := range [][]string{{"groups", "list", "--data-dir", data}, {"groups", "list", "--cluster-dir", filepath.Join(data, "__cluster")}} {
		if r := runCLI(t, "", nil, args...); r.Code != 0 || !strings.Contains(r.Out, "orders-app") {
			t.Errorf("%v: %d %q %q", args, r.Code, r.Out, r.Err)
		}
	}
}

// No flag's help states its default twice (its own words and urfave's
// "(default: …)"), and no switch is described as "(default: false)": the
// help of every command and sub-command is scanned.
func TestHelpSaysEachDefaultOnce(t *testing.T) {
	t.Parallel()
	app := NewApp(&IOStreams{})
	paths := [][]string{{}}
	var walk func(cmds []*cli.Command, prefix []string)
	walk = func(cmds []*cli.Command, prefix []string) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string{}, prefix...), c.Name)
			paths = append(paths, p)
			walk(c.Subcommands, p)
		}
	}
	walk(app.Commands, nil)
	lines := 0
	for _, p := range paths {
		r := runCLI(t, "", nil, append(p, "--help")...)
		if r.Code != 0 {
			t.Errorf("%v --help: exit %d %s", p, r.Code, r.Err)
			continue
		}
		for _, line := range strings.Split(r.Out, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "-") {
				continue
			}
			lines++
			if n := strings.Count(strings.ToLower(line), "(default"); n > 1 {
				t.Errorf("%v: the default is given %d times: %s", p, n, strings.TrimSpace(line))
			}
			if strings.Contains(line, "(default: false)") {
				t.Errorf("%v: a switch described as off by default: %s", p, strings.TrimSpace(line))
			}
			if strings.Contains(strings.ToLower(line), "the default)") && strings.Contains(line, "(default: ") {
				t.Errorf("%v: calls itself the default and names another: %s", p, strings.TrimSpace(line))
			}
		}
	}
	if lines < 100 {
		t.Fatalf("only %d flag lines found in %d help pages", lines, len(paths))
	}
}
