package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/views"
)

// configGlobals builds the Globals of a config command run with HOME set
// to home, without a cli.Context.
func configGlobals(t *testing.T, home string, args ...string) (*Globals, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": home}
	return mustGlobals(t, &IOStreams{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}, args...), &out, &errb
}

func TestRunConfigProfileLifecycle(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ctx := context.Background()
	g, out, _ := configGlobals(t, home, "-o", "json")
	set := configSetProfileOptions{Name: "lab", Edit: wire.ProfileEdit{Set: map[string]string{wire.KeyBrokers: "k:9092", wire.KeyDataDir: "/d"}}}
	if err := runConfigSetProfile(ctx, g, set); err != nil {
		t.Fatal(err)
	}
	var sv views.SetProfileView
	if err := json.Unmarshal(out.Bytes(), &sv); err != nil {
		t.Fatal(err)
	}
	if !sv.Created || !sv.Current || sv.Profile.DataDir != "/d" {
		t.Fatalf("set-profile view %+v", sv)
	}
	g, _, _ = configGlobals(t, home)
	if err := runConfigSetProfile(ctx, g, configSetProfileOptions{Name: "prod", Edit: wire.ProfileEdit{Set: map[string]string{wire.KeyTimeout: "3s"}}}); err != nil {
		t.Fatal(err)
	}
	if err := runConfigUse(ctx, g, configUseOptions{Name: "prod"}); err != nil {
		t.Fatal(err)
	}
	err := runConfigUse(ctx, g, configUseOptions{Name: "nope"})
	if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), `no profile "nope" in `+home) || !strings.Contains(err.Error(), "known profiles: lab, prod") {
		t.Fatalf("use nope: %v", err)
	}
	g, out, _ = configGlobals(t, home, "-o", "json")
	if err := runConfigList(ctx, g, configListOptions{}); err != nil {
		t.Fatal(err)
	}
	var lv views.ConfigListView
	if err := json.Unmarshal(out.Bytes(), &lv); err != nil {
		t.Fatal(err)
	}
	if lv.Current != "prod" || lv.Active != "prod" || len(lv.Profiles) != 2 || lv.Profiles[0].Name != "lab" || lv.Profiles[0].Brokers[0] != "k:9092" {
		t.Fatalf("list %+v", lv)
	}
	g, _, errb := configGlobals(t, home)
	if err := runConfigDelete(ctx, g, configDeleteOptions{Name: "prod"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), `"prod" was the current profile`) {
		t.Fatalf("delete of the current profile not noted: %q", errb.String())
	}
	g, out, _ = configGlobals(t, home, "-o", "json")
	if err := runConfigPath(ctx, g, configPathOptions{}); err != nil {
		t.Fatal(err)
	}
	var pv views.ConfigPathView
	if err := json.Unmarshal(out.Bytes(), &pv); err != nil || !pv.Exists || !strings.HasPrefix(pv.Path, home) || pv.Source != "default" {
		t.Fatalf("path %+v %v", pv, err)
	}
}

func TestRunConfigSetProfileRefusesInvalid(t *testing.T) {
	t.Parallel()
	g, _, _ := configGlobals(t, t.TempDir())
	err := runConfigSetProfile(context.Background(), g, configSetProfileOptions{Name: "x", Edit: wire.ProfileEdit{Set: map[string]string{wire.KeyBrokers: "nohost"}}})
	if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), `profile "x": brokers:`) {
		t.Fatalf("got %v", err)
	}
}

func TestRunConfigShowNamedProfile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ctx := context.Background()
	g, _, _ := configGlobals(t, home)
	for _, name := range []string{"a", "b"} {
		o := configSetProfileOptions{Name: name, Edit: wire.ProfileEdit{Set: map[string]string{wire.KeyBrokers: name + ":9092", wire.KeyKaasVersion: "0.2.18"}}}
		if err := runConfigSetProfile(ctx, g, o); err != nil {
			t.Fatal(err)
		}
	}
	// Profile b, the --timeout flag still winning over it.
	g, out, _ := configGlobals(t, home, "-o", "json", "--timeout", "7s", "--data-dir", "/flag")
	err := runConfigShow(ctx, g, configShowOptions{Profile: "b"})
	if exit.Code(err) != exit.Problems { // /flag does not exist
		t.Fatalf("show b: %v", err)
	}
	var v views.ConfigShowView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	got := map[string]views.SettingRow{}
	for _, r := range v.Settings {
		got[r.Key] = r
	}
	if v.Profile != "b" || got["brokers"].Value != "b:9092" || got["brokers"].Source != "profile b" || got["timeout"].Source != "flag --timeout" ||
		got["data-dir"].Source != "flag --data-dir" || got["kaas-version"] != (views.SettingRow{Key: "kaas-version", Value: "0.2.18", Source: "profile b"}) {
		t.Fatalf("settings %+v", got)
	}
	if len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "/flag") {
		t.Fatalf("problems %v", v.Problems)
	}
}

func TestRunConfigCheck(t *testing.T) {
	t.Parallel()
	cl, err := kfake.NewCluster(kfake.NumBrokers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	g, out, _ := configGlobals(t, t.TempDir(), "-o", "json", "-b", strings.Join(cl.ListenAddrs(), ","))
	if err := runConfigCheck(context.Background(), g, configCheckOptions{}); err != nil {
		t.Fatal(err)
	}
	var v views.ConfigCheckView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Seeds) != 2 || !v.Seeds[0].OK || len(v.Brokers) != 2 || len(v.Caps) == 0 {
		t.Fatalf("%+v", v)
	}
	g, _, _ = configGlobals(t, t.TempDir())
	err = runConfigCheck(context.Background(), g, configCheckOptions{Profile: "nope"})
	var ue *exit.CodedError
	if !errors.As(err, &ue) || exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), `profile "nope"`) {
		t.Fatalf("unknown profile: %v", err)
	}
}
