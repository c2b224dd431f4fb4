package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/urfave/cli/v2"
)

// cfgEnv is a test environment with its own HOME.
type cfgEnv struct {
	t    *testing.T
	home string
	env  map[string]string
}

func newCfgEnv(t *testing.T) *cfgEnv {
	home := t.TempDir()
	return &cfgEnv{t: t, home: home, env: map[string]string{"HOME": home}}
}

func (e *cfgEnv) run(args ...string) (code int, out, errOut string) {
	var o, eb bytes.Buffer
	code = Main(append([]string{"kaasctl"}, args...), &IOStreams{In: strings.NewReader(""), Out: &o, Err: &eb, Getenv: func(k string) string { return e.env[k] }})
	return code, strings.ReplaceAll(o.String(), e.home, "$HOME"), strings.ReplaceAll(eb.String(), e.home, "$HOME")
}

// realign re-aligns a plain table after paths were replaced by $HOME, so
// golden files do not depend on the temp dir's length.
func realign(out string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	sep := regexp.MustCompile(` {2,}`)
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		fmt.Fprintln(tw, strings.Join(sep.Split(strings.TrimRight(line, " "), -1), "\t"))
	}
	tw.Flush()
	return b.String()
}

func (e *cfgEnv) must(args ...string) string {
	e.t.Helper()
	code, out, errOut := e.run(args...)
	if code != 0 {
		e.t.Fatalf("kaasctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (e *cfgEnv) path() string { return filepath.Join(e.home, ".config", "kaasctl", "config.yaml") }

func (e *cfgEnv) seed() {
	e.t.Helper()
	e.must("config", "set-profile", "prod", "--brokers", "kaas-0.kaas:9092,kaas-1.kaas:9092", "--data-dir", "/var/lib/kaas",
		"--sasl-mechanism", "scram-sha-512", "--sasl-user", "ops", "--sasl-password-env", "PROD_KAAS_PW", "--tls-ca", "/etc/kaas/ca.pem", "--timeout", "30s")
	e.must("config", "set-profile", "dev", "-b", "localhost:9092", "--max-versions", "3.6")
}

func TestConfigSetProfileWritesPrivateFile(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	e.seed()
	st, err := os.Stat(e.path())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(filepath.Dir(e.path())); dst.Mode().Perm() != 0o700 {
		t.Errorf("config dir mode %v, want 0700", dst.Mode().Perm())
	}
	data, _ := os.ReadFile(e.path())
	for _, want := range []string{"current: prod", "passwordEnv: PROD_KAAS_PW", "mechanism: SCRAM-SHA-512", "dataDir: /var/lib/kaas", "maxVersions: \"3.6\""} {
		if !strings.Contains(string(data), want) {
			t.Errorf("config lacks %q:\n%s", want, data)
		}
	}
	// The first profile became current; updating keeps the other fields.
	e.must("config", "set-profile", "prod", "--timeout", "5s")
	data, _ = os.ReadFile(e.path())
	if !strings.Contains(string(data), "timeout: 5s") || !strings.Contains(string(data), "kaas-1.kaas:9092") {
		t.Errorf("update lost fields:\n%s", data)
	}
	e.must("config", "set-profile", "prod", "--unset", "tls-ca", "--unset", "timeout")
	data, _ = os.ReadFile(e.path())
	if strings.Contains(string(data), "ca.pem") || strings.Contains(string(data), "timeout") {
		t.Errorf("--unset kept fields:\n%s", data)
	}
}

func TestConfigListGolden(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	e.seed()
	checkGolden(t, "config_list.txt", []byte(e.must("config", "list")))
	var v views.ConfigListView
	if err := json.Unmarshal([]byte(e.must("config", "list", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Current != "prod" || v.Active != "prod" || len(v.Profiles) != 2 || v.Profiles[1].Name != "prod" || !v.Profiles[1].Active || v.Profiles[1].SASL != "SCRAM-SHA-512" || !v.Profiles[1].TLS {
		t.Errorf("%+v", v)
	}
	// --profile changes the marked one, not the file.
	var v2 views.ConfigListView
	json.Unmarshal([]byte(e.must("config", "list", "-o", "json", "--profile", "dev")), &v2)
	if v2.Active != "dev" || v2.Current != "prod" {
		t.Errorf("--profile: %+v", v2)
	}
}

func TestConfigShowGoldenAndMasked(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	e.seed()
	e.env["PROD_KAAS_PW"] = "sup3r-s3cret-value"
	dataDir := filepath.Join(e.home, "kaas-data")
	os.MkdirAll(filepath.Join(dataDir, "__cluster"), 0o755)
	e.env["KAAS_DATA_DIR"] = dataDir
	out := e.must("config", "show")
	checkGolden(t, "config_show.txt", []byte(realign(out)))
	for _, f := range []string{"table", "wide", "json", "yaml", "jsonl", "csv"} {
		code, out, errOut := e.run("config", "show", "-o", f)
		if code != 0 {
			t.Fatalf("-o %s: exit %d %s", f, code, errOut)
		}
		if strings.Contains(out+errOut, "sup3r") {
			t.Fatalf("-o %s prints the password", f)
		}
	}
	var v views.ConfigShowView
	if err := json.Unmarshal([]byte(e.must("config", "show", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]views.SettingRow{}
	for _, r := range v.Settings {
		got[r.Key] = r
	}
	if r := got["sasl-password"]; r.Value != "********" || r.Source != "env PROD_KAAS_PW" {
		t.Errorf("password row %+v", r)
	}
	if r := got["brokers"]; r.Source != "profile prod" {
		t.Errorf("brokers row %+v", r)
	}
	if r := got["data-dir"]; r.Value != "$HOME/kaas-data" || r.Source != "env KAAS_DATA_DIR" {
		t.Errorf("env must beat the profile's dataDir: %+v", r)
	}
	// Flag beats env beats profile, each labelled.
	e.env["KAASCTL_TIMEOUT"] = "7s"
	json.Unmarshal([]byte(e.must("config", "show", "-o", "json", "--brokers", "h:1")), &v)
	got = map[string]views.SettingRow{}
	for _, r := range v.Settings {
		got[r.Key] = r
	}
	if got["brokers"].Source != "flag --brokers" || got["timeout"].Value != "7s" || got["timeout"].Source != "env KAASCTL_TIMEOUT" {
		t.Errorf("%+v %+v", got["brokers"], got["timeout"])
	}
	// show NAME resolves another profile.
	json.Unmarshal([]byte(e.must("config", "show", "dev", "-o", "json")), &v)
	if v.Profile != "dev" {
		t.Errorf("show dev: %+v", v)
	}
	// A missing password is reported, not invented.
	delete(e.env, "PROD_KAAS_PW")
	if out := e.must("config", "show"); !strings.Contains(out, "(not set)") {
		t.Errorf("missing password not shown:\n%s", out)
	}
}

func TestConfigProfileFeedsVolume(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "__cluster"), 0o755)
	e.must("config", "set-profile", "lab", "--data-dir", data, "--use")
	var v views.ConfigShowView
	json.Unmarshal([]byte(e.must("config", "show", "-o", "json")), &v)
	found := false
	for _, r := range v.Settings {
		if r.Key == "volume" {
			found = true
			if r.Value != filepath.Join(strings.ReplaceAll(data, e.home, "$HOME"), "__cluster") || !strings.Contains(r.Source, "profile dataDir") {
				t.Errorf("volume row %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("no volume row: %+v", v.Settings)
	}
	// And through Globals.Layout, the way every offline command resolves it.
	g := &Globals{IO: &IOStreams{Getenv: func(k string) string { return e.env[k] }}}
	g.conn = resolveConnFrom(map[string]string{}, g.IO)
	g.vin.ProfileDataDir, g.vin.ProfileClusterDir = g.conn.Settings.DataDir, g.conn.Settings.ClusterDir
	l, err := g.Layout()
	if err != nil || l.DataDir != data {
		t.Errorf("Layout from profile: %+v %v", l, err)
	}
}

func TestConfigUseDeletePath(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	e.seed()
	e.must("config", "use", "dev")
	var v views.ConfigListView
	json.Unmarshal([]byte(e.must("config", "list", "-o", "json")), &v)
	if v.Current != "dev" {
		t.Errorf("use: %+v", v)
	}
	if code, _, errOut := e.run("config", "use", "nope"); code != 2 || !strings.Contains(errOut, "known profiles: dev, prod") {
		t.Errorf("use unknown: %d %s", code, errOut)
	}
	_, _, errOut := e.run("config", "delete", "dev")
	if !strings.Contains(errOut, "none is current") {
		t.Errorf("deleting the current profile: %s", errOut)
	}
	json.Unmarshal([]byte(e.must("config", "list", "-o", "json")), &v)
	if v.Current != "" || len(v.Profiles) != 1 {
		t.Errorf("delete: %+v", v)
	}
	if code, _, _ := e.run("config", "delete", "dev"); code != 2 {
		t.Errorf("delete twice: exit %d", code)
	}
	if out := e.must("config", "path"); out != "$HOME/.config/kaasctl/config.yaml\n" {
		t.Errorf("path %q", out)
	}
	e.env["XDG_CONFIG_HOME"] = filepath.Join(e.home, "xdg")
	if out := e.must("config", "path"); out != "$HOME/xdg/kaasctl/config.yaml\n" {
		t.Errorf("XDG path %q", out)
	}
	other := filepath.Join(e.home, "elsewhere.yaml")
	e.must("config", "set-profile", "x", "-b", "h:1", "--config", other)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("--config not honoured: %v", err)
	}
	e.env["KAASCTL_CONFIG"] = other
	var pv views.ConfigPathView
	json.Unmarshal([]byte(e.must("config", "path", "-o", "json")), &pv)
	if pv.Source != "env KAASCTL_CONFIG" || !pv.Exists {
		t.Errorf("KAASCTL_CONFIG: %+v", pv)
	}
}

func TestConfigBrokenFile(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	os.MkdirAll(filepath.Dir(e.path()), 0o700)
	broken := "profiles:\n  prod:\n    brokers: [a:1\n"
	os.WriteFile(e.path(), []byte(broken), 0o600)
	code, _, errOut := e.run("config", "set-profile", "x", "-b", "h:1")
	if code == 0 || !strings.Contains(errOut, e.path()[len(e.home):]) || !strings.Contains(errOut, "does not overwrite") {
		t.Errorf("set-profile over a broken file: %d %s", code, errOut)
	}
	if data, _ := os.ReadFile(e.path()); string(data) != broken {
		t.Error("broken file was changed")
	}
	// Offline commands still run, with a warning.
	code, _, errOut = e.run("version")
	if code != 0 || !strings.Contains(errOut, "warning: config") {
		t.Errorf("version with a broken config: %d %q", code, errOut)
	}
	// Naming a profile makes it an error.
	if code, _, _ := e.run("version", "--profile", "prod"); code != 2 {
		t.Errorf("--profile with a broken config: exit %d", code)
	}
	// config show reports it and exits 3.
	if code, _, errOut := e.run("config", "show"); code != 3 || !strings.Contains(errOut, "config") {
		t.Errorf("show: %d %s", code, errOut)
	}
	// A password stored in the file is refused without echoing it.
	os.WriteFile(e.path(), []byte("profiles:\n  p:\n    sasl: {mechanism: PLAIN, user: u, password: hunter2}\n"), 0o600)
	code, out, errOut := e.run("config", "show", "--profile", "p")
	if code == 0 || strings.Contains(out+errOut, "hunter2") || !strings.Contains(errOut, "never stored") {
		t.Errorf("password in file: %d %s %s", code, out, errOut)
	}
}

func TestConfigNoHome(t *testing.T) {
	t.Parallel()
	var o, eb bytes.Buffer
	code := Main([]string{"kaasctl", "config", "path"}, &IOStreams{Out: &o, Err: &eb, Getenv: func(string) string { return "" }})
	if code != 2 || !strings.Contains(eb.String(), "--config") {
		t.Errorf("%d %s", code, eb.String())
	}
}

func TestConfigCheckLive(t *testing.T) {
	t.Parallel()
	cl, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "pw-abc"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	e := newCfgEnv(t)
	e.env["OPS_PW"] = "pw-abc"
	brokers := strings.Join(cl.ListenAddrs(), ",")
	out := e.must("config", "check", "-b", brokers, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "ops", "--sasl-password-env", "OPS_PW", "-o", "json")
	var v views.ConfigCheckView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Brokers) != 3 || len(v.Seeds) != 3 || !v.Seeds[0].OK || v.SASL != "SCRAM-SHA-256" || v.MaxVersions != "kaas" {
		t.Errorf("%+v", v)
	}
	if strings.Contains(out, "pw-abc") {
		t.Error("password in output")
	}
	// Wrong password: one line naming the broker, exit 1.
	e.env["OPS_PW"] = "nope"
	code, _, errOut := e.run("config", "check", "-b", cl.ListenAddrs()[0], "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "ops", "--sasl-password-env", "OPS_PW", "--timeout", "3s")
	if code != 1 || !strings.Contains(errOut, "SASL authenticate failed") || !strings.Contains(errOut, cl.ListenAddrs()[0]) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("wrong password: %d %q", code, errOut)
	}
	// No brokers anywhere.
	code, _, errOut = e.run("config", "check")
	if code != 2 || !strings.Contains(errOut, "no brokers given: pass --brokers or set KAASCTL_BROKERS or a profile") {
		t.Errorf("no brokers: %d %q", code, errOut)
	}
	// A dead port among live seeds: exit 3, the dead one named.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	e.env["OPS_PW"] = "pw-abc"
	code, out, _ = e.run("config", "check", "-b", dead+","+cl.ListenAddrs()[1], "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "ops", "--sasl-password-env", "OPS_PW")
	if code != 3 || !strings.Contains(out, dead) || !strings.Contains(out, "connection refused") {
		t.Errorf("dead seed: %d\n%s", code, out)
	}
	// A bad --max-versions is a usage error.
	if code, _, errOut := e.run("config", "check", "-b", brokers, "--max-versions", "banana"); code != 2 || !strings.Contains(errOut, "banana") {
		t.Errorf("bad cap: %d %s", code, errOut)
	}
}

func TestClientAccessor(t *testing.T) {
	t.Parallel()
	cl, err := kfake.NewCluster(kfake.NumBrokers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	g := &Globals{IO: &IOStreams{Err: &bytes.Buffer{}, Getenv: func(k string) string {
		if k == "KAASCTL_BROKERS" {
			return strings.Join(cl.ListenAddrs(), ",")
		}
		return ""
	}}}
	g.conn = resolveConnFrom(map[string]string{}, g.IO)
	if !g.HasBrokers() {
		t.Fatal("KAASCTL_BROKERS not seen")
	}
	c, err := g.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bs, err := c.Brokers(context.Background())
	if err != nil || len(bs) != 2 {
		t.Fatalf("%v %v", bs, err)
	}
	g2 := &Globals{IO: &IOStreams{Getenv: func(string) string { return "" }}}
	g2.conn = resolveConnFrom(map[string]string{}, g2.IO)
	if _, err := g2.Client(context.Background()); err == nil || !strings.Contains(err.Error(), "no brokers given") {
		t.Errorf("no brokers: %v", err)
	}
}

func TestConfigPasswordTypedIntoEnvFlag(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	code, out, errOut := e.run("config", "set-profile", "p", "-b", "h:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "hunter2")
	if code != 2 || strings.Contains(out+errOut, "hunter2") {
		t.Errorf("set-profile with a password as env name: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(e.path()); err == nil {
		data, _ := os.ReadFile(e.path())
		if strings.Contains(string(data), "hunter2") {
			t.Fatal("password saved")
		}
	}
	for _, args := range [][]string{
		{"config", "show", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "hunter2"},
		{"config", "show", "-o", "json", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "hunter2"},
		{"config", "check", "-b", "127.0.0.1:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-env", "hunter2"},
	} {
		_, out, errOut := e.run(args...)
		if strings.Contains(out+errOut, "hunter2") {
			t.Errorf("%v prints the value: %s %s", args, out, errOut)
		}
	}
}

func TestCommandOwnFlagBeatsConnectionFlag(t *testing.T) {
	t.Parallel()
	own := []cli.Flag{&cli.IntFlag{Name: "brokers", Value: 3}}
	got := completion.AppendMissing(own, commonFlags())
	n := 0
	for _, f := range got {
		for _, name := range f.Names() {
			if name == "brokers" || name == "b" {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d flags named brokers/b after merging", n)
	}
	// The command runs, and its own --brokers is not read as a broker list.
	app := &cli.App{Writer: &bytes.Buffer{}, Commands: []*cli.Command{{
		Name:  "x",
		Flags: got,
		Action: func(c *cli.Context) error {
			if c.Int("brokers") != 5 {
				t.Errorf("own flag lost: %d", c.Int("brokers"))
			}
			if m := flagInput(c); m["brokers"] != "" {
				t.Errorf("own --brokers read as a connection flag: %q", m["brokers"])
			}
			return nil
		},
	}}}
	if err := app.Run([]string{"kaasctl", "x", "--brokers", "5", "--timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
}

func TestHelpConnectionTopic(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	out := e.must("help", "connection")
	for _, want := range []string{"KAASCTL_BROKERS", "passwordEnv", "--max-versions", "ApiVersions v0-4"} {
		if !strings.Contains(out, want) {
			t.Errorf("help connection lacks %q", want)
		}
	}
}

// 'config check NAME' checks profile NAME, not the current one.
func TestConfigCheckNamedProfile(t *testing.T) {
	t.Parallel()
	cl, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	e := newCfgEnv(t)
	e.must("config", "set-profile", "live", "--brokers", cl.ListenAddrs()[0])
	e.must("config", "set-profile", "gone", "--brokers", dead, "--timeout", "2s", "--use")
	out := e.must("config", "check", "live", "-o", "json")
	var v views.ConfigCheckView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Profile != "live" || len(v.Seeds) != 1 || v.Seeds[0].Broker != cl.ListenAddrs()[0] || !v.Seeds[0].OK {
		t.Errorf("config check live checked %+v", v)
	}
	if code, _, errOut := e.run("config", "check", "nope"); code != 2 || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("unknown profile: %d %s", code, errOut)
	}
	if code, _, errOut := e.run("config", "check", "live", "--profile", "gone"); code != 2 || !strings.Contains(errOut, "two different profiles") {
		t.Errorf("NAME and --profile: %d %s", code, errOut)
	}
	if code, _, _ := e.run("config", "check", "live", "gone"); code != 2 {
		t.Errorf("two names: exit %d", code)
	}
	// config show NAME agrees.
	out = e.must("config", "show", "live", "-o", "json")
	if !strings.Contains(out, cl.ListenAddrs()[0]) || strings.Contains(out, dead) {
		t.Errorf("config show live:\n%s", out)
	}
}

// A profile named as config check's argument is reported as such, not as
// the --profile flag the user did not give.
func TestConfigCheckUnknownProfileArgument(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	code, _, errOut := e.run("config", "check", "nope")
	if code != 2 || !strings.Contains(errOut, `profile "nope" (from argument)`) || strings.Contains(errOut, "--profile") {
		t.Errorf("config check nope: exit %d %s", code, errOut)
	}
	code, _, errOut = e.run("config", "check", "--profile", "nope")
	if code != 2 || !strings.Contains(errOut, `(from flag --profile)`) {
		t.Errorf("config check --profile nope: exit %d %s", code, errOut)
	}
	code, out, _ := e.run("config", "show", "nope", "-o", "json")
	if !strings.Contains(out, `(from argument)`) {
		t.Errorf("config show nope: exit %d %s", code, out)
	}
}

// resolveConnFrom resolves the connection of flags alone.
func resolveConnFrom(flags map[string]string, ios *IOStreams) *wire.Connection {
	return resolveConnWith(wire.ConnInput{Flags: flags}, ios)
}
