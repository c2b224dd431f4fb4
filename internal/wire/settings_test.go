package wire

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const sampleConfig = `
current: prod
profiles:
  prod:
    dataDir: /data
    clusterDir: /cluster
    brokers: [kaas-0:9092, kaas-1:9092]
    tls:
      caFile: /etc/kaas/ca.pem
    sasl:
      mechanism: SCRAM-SHA-512
      user: ops
      passwordEnv: PROD_PW
    timeout: 30s
    maxVersions: "3.6"
  dev:
    brokers: "localhost:9092, localhost:9093"
`

func parse(t *testing.T, s string) *Config {
	t.Helper()
	cfg, err := ParseConfig("config.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg := parse(t, sampleConfig)
	if cfg.Current != "prod" || len(cfg.Profiles) != 2 {
		t.Fatalf("%+v", cfg)
	}
	if got := cfg.Profiles["dev"].Brokers; len(got) != 2 || got[1] != "localhost:9093" {
		t.Errorf("comma string brokers: %v", got)
	}
	p := cfg.Profiles["prod"]
	if p.TLS.CAFile != "/etc/kaas/ca.pem" || p.SASL.Mechanism != "SCRAM-SHA-512" || p.Timeout != "30s" {
		t.Errorf("%+v", p)
	}
}

func TestParseConfigRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ doc, want string }{
		"password":        {"profiles:\n  p:\n    sasl:\n      password: hunter2\n", "never stored"},
		"unknown key":     {"profiles:\n  p:\n    brokrs: [a:1]\n", "brokrs"},
		"bad broker":      {"profiles:\n  p:\n    brokers: [nohost]\n", "host:port"},
		"bad mechanism":   {"profiles:\n  p:\n    sasl: {mechanism: GSSAPI, user: u}\n", "GSSAPI"},
		"bad timeout":     {"profiles:\n  p:\n    timeout: forever\n", "timeout"},
		"bad maxVersions": {"profiles:\n  p:\n    maxVersions: 9.9\n", "maxVersions"},
		"unknown current": {"current: nope\nprofiles:\n  p: {}\n", "nope"},
		"not yaml":        {"profiles: [\n", "config.yaml"},
		"two docs":        {"profiles: {}\n---\nprofiles: {}\n", "more than one"},
		"bad name":        {"profiles:\n  \"a b\": {}\n", "profile name"},
		"typed value":     {"profiles:\n  p:\n    tls: {insecureSkipVerify: hunter2}\n", "line 3"},
		"env value":       {"profiles:\n  p:\n    sasl: {mechanism: PLAIN, user: u, passwordEnv: \"pa ss\"}\n", "environment variable"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig("config.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error echoes the password: %v", err)
			}
		})
	}
}

func TestParseConfigEmptyAndNull(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"", "   \n", "profiles:\n", "profiles:\n  p:\n", "current: \"\"\n"} {
		cfg, err := ParseConfig("c", []byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if cfg.Profiles == nil {
			t.Fatalf("%q: nil profiles", doc)
		}
		for n, p := range cfg.Profiles {
			if p == nil {
				t.Fatalf("%q: nil profile %s", doc, n)
			}
		}
	}
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	cfg := parse(t, sampleConfig)
	env := map[string]string{}
	in := func(flags map[string]string) *Settings {
		t.Helper()
		s, err := Resolve(Input{Flags: flags, Getenv: func(k string) string { return env[k] }}, cfg, "/c.yaml", Source{Kind: "default"}, true)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := in(nil)
	if s.Profile != "prod" || s.ProfileSrc.Kind != "config" {
		t.Errorf("current profile not used: %q %v", s.Profile, s.ProfileSrc)
	}
	if s.Brokers[0] != "kaas-0:9092" || s.Sources[KeyBrokers].String() != "profile prod" {
		t.Errorf("profile brokers: %v %v", s.Brokers, s.Sources[KeyBrokers])
	}
	if !s.TLS.Enabled || s.Sources[KeyTLS].Kind != "implied" {
		t.Errorf("caFile must imply TLS: %+v", s.TLS)
	}
	if s.Timeout != 30*time.Second || s.MaxVersions != "3.6" || s.DataDir != "/data" || s.ClusterDir != "/cluster" {
		t.Errorf("%+v", s)
	}
	env["KAASCTL_BROKERS"] = "env-host:1"
	env["KAASCTL_TIMEOUT"] = "5000" // milliseconds, as Kafka means a bare --timeout
	s = in(nil)
	if s.Brokers[0] != "env-host:1" || s.Sources[KeyBrokers].String() != "env KAASCTL_BROKERS" || s.Timeout != 5*time.Second {
		t.Errorf("env over profile: %v %v %v", s.Brokers, s.Sources[KeyBrokers], s.Timeout)
	}
	s = in(map[string]string{KeyBrokers: "flag-host:2", KeyTimeout: "250ms"})
	if s.Brokers[0] != "flag-host:2" || s.Sources[KeyBrokers].String() != "flag --brokers" || s.Timeout != 250*time.Millisecond {
		t.Errorf("flag over env: %v %v", s.Brokers, s.Timeout)
	}
	env["KAASCTL_PROFILE"] = "dev"
	s = in(nil)
	if s.Profile != "dev" || s.TLS.Enabled || s.SASL.Mechanism != "" {
		t.Errorf("KAASCTL_PROFILE: %+v", s)
	}
	s = in(map[string]string{KeyProfile: "prod", KeyTLS: "false"})
	if s.Profile != "prod" || s.TLS.Enabled {
		t.Errorf("--profile over env and --tls=false over the profile: %q %+v", s.Profile, s.TLS)
	}
	if _, err := Resolve(Input{Flags: map[string]string{KeyProfile: "nope"}}, cfg, "/c.yaml", Source{}, true); err == nil || !strings.Contains(err.Error(), "dev, prod") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		flags map[string]string
		want  string
	}{
		"bad timeout":       {map[string]string{KeyTimeout: "soon"}, "timeout"},
		"bad max":           {map[string]string{KeyMaxVersions: "99.1"}, "max-versions"},
		"cert without key":  {map[string]string{KeyTLSCert: "c.pem"}, "--tls-key"},
		"user without mech": {map[string]string{KeySASLUser: "u"}, "--sasl-mechanism"},
		"mech without user": {map[string]string{KeySASLMechanism: "PLAIN"}, "needs a user"},
		"bad bool":          {map[string]string{KeyTLS: "maybe"}, "true or false"},
		"password as env":   {map[string]string{KeySASLMechanism: "PLAIN", KeySASLUser: "u", KeySASLPasswordEnv: "p@ss w0rd!"}, "not an environment variable name"},
		"bad broker":        {map[string]string{KeyBrokers: "a:1,b"}, "host:port"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Resolve(Input{Flags: tc.flags}, nil, "", Source{}, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "p@ss") {
				t.Fatalf("error echoes a password-like value: %v", err)
			}
		})
	}
}

func TestPasswordSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pf := filepath.Join(dir, "pw")
	os.WriteFile(pf, []byte("filepw\r\n"), 0o600)
	env := map[string]string{"MYPW": "envpw", DefaultPasswordEnv: "defpw"}
	get := func(k string) string { return env[k] }
	base := map[string]string{KeySASLMechanism: "PLAIN", KeySASLUser: "u"}
	with := func(extra map[string]string) *Settings {
		f := map[string]string{}
		for k, v := range base {
			f[k] = v
		}
		for k, v := range extra {
			f[k] = v
		}
		s, err := Resolve(Input{Flags: f, Getenv: get}, nil, "", Source{}, false)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for want, s := range map[string]*Settings{
		"defpw":  with(nil),
		"envpw":  with(map[string]string{KeySASLPasswordEnv: "MYPW"}),
		"filepw": with(map[string]string{KeySASLPasswordFil: pf}),
	} {
		got, err := s.Password()
		if err != nil || got != want {
			t.Errorf("password %q, %v; want %q", got, err, want)
		}
		if st := s.PasswordStatus(); strings.Contains(st, want) || !strings.Contains(st, "***") {
			t.Errorf("status %q reveals or hides wrongly", st)
		}
	}
	os.Chmod(pf, 0o644)
	if st := with(map[string]string{KeySASLPasswordFil: pf}).PasswordStatus(); !strings.Contains(st, "chmod 600") {
		t.Errorf("world-readable password file not flagged: %q", st)
	}
	s := with(map[string]string{KeySASLPasswordEnv: "UNSET_VAR"})
	if _, err := s.Password(); err == nil || !strings.Contains(err.Error(), "UNSET_VAR") {
		t.Errorf("unset env: %v", err)
	}
	// A flag-level file beats a profile-level env.
	cfg := parse(t, "profiles:\n  p:\n    sasl: {mechanism: PLAIN, user: u, passwordEnv: MYPW}\n")
	s2, err := Resolve(Input{Flags: map[string]string{KeyProfile: "p", KeySASLPasswordFil: pf}, Getenv: get}, cfg, "", Source{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.Password(); got != "filepw" {
		t.Errorf("flag file did not beat profile env: %q", got)
	}
}

func TestSaveConfigAtomicAndPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "home", ".config", "kaasctl")
	path := filepath.Join(dir, "config.yaml")
	cfg := parse(t, sampleConfig)
	if err := SaveConfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	dst, _ := os.Stat(dir)
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", dst.Mode().Perm())
	}
	back, exists, err := LoadConfig(path)
	if err != nil || !exists {
		t.Fatal(err)
	}
	if back.Current != "prod" || back.Profiles["prod"].SASL.PasswordEnv != "PROD_PW" || len(back.Profiles["dev"].Brokers) != 2 {
		t.Errorf("round trip: %+v", back)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

func TestLoadConfigMissingAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, exists, err := LoadConfig(filepath.Join(dir, "none.yaml"))
	if err != nil || exists || cfg == nil {
		t.Fatalf("missing file: %v %v", exists, err)
	}
	if _, _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte(strings.Repeat("#", MaxConfigBytes+10)), 0o600)
	if _, _, err := LoadConfig(big); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("huge: %v", err)
	}
}

func TestDefaultConfigPath(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/home/op"}
	get := func(k string) string { return env[k] }
	if p := DefaultConfigPath(get); p != "/home/op/.config/kaasctl/config.yaml" {
		t.Error(p)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if p := DefaultConfigPath(get); p != "/xdg/kaasctl/config.yaml" {
		t.Error(p)
	}
	env["XDG_CONFIG_HOME"] = "relative"
	if p := DefaultConfigPath(get); p != "/home/op/.config/kaasctl/config.yaml" {
		t.Errorf("relative XDG_CONFIG_HOME must be ignored: %s", p)
	}
	if p := DefaultConfigPath(func(string) string { return "" }); p != "" {
		t.Error(p)
	}
}

func TestParseMaxVersions(t *testing.T) {
	t.Parallel()
	v, err := ParseMaxVersions("kaas")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range KaasMaxVersions {
		if got, ok := v.LookupMaxKeyVersion(k); !ok || got != want {
			t.Errorf("kaas cap %s = %d, want %d", kmsg.NameForKey(k), got, want)
		}
	}
	// Keys kaas does not list stay available (SASL, for one).
	if !v.HasKey(int16(kmsg.SASLAuthenticate)) || !v.HasKey(int16(kmsg.SASLHandshake)) {
		t.Error("SASL keys missing from the kaas cap")
	}
	for _, s := range []string{"latest", "3.6", "v3.6", "2.8.1", "0.11.0", "KAAS"} {
		v, err := ParseMaxVersions(s)
		if err != nil || v == nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if of, _ := v.LookupMaxKeyVersion(int16(kmsg.OffsetFetch)); of > 9 {
			t.Errorf("%q: OffsetFetch v%d addresses topics by id only", s, of)
		}
	}
	v36, _ := ParseMaxVersions("3.6")
	if lg, _ := v36.LookupMaxKeyVersion(int16(kmsg.ListOffsets)); lg != 8 {
		t.Errorf("3.6 ListOffsets = %d, want 8", lg)
	}
	for _, s := range []string{"3", "foo", "9.9", "-1", strings.Repeat("9", 100), "3.6\x00"} {
		if _, err := ParseMaxVersions(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if caps := GroupAPICaps(v); len(caps) != 10 || caps[0].API != "ApiVersions" || caps[0].Max != 4 {
		t.Errorf("caps %+v", caps)
	}
}

func TestParseTimeout(t *testing.T) {
	t.Parallel()
	// A bare number is milliseconds, as Kafka's --timeout means it.
	for s, want := range map[string]time.Duration{"10s": 10 * time.Second, "1m": time.Minute, "3000": 3 * time.Second, "30000": 30 * time.Second, "500ms": 500 * time.Millisecond, "3600000": time.Hour, "1h": time.Hour} {
		if d, err := ParseTimeout(s); err != nil || d != want {
			t.Errorf("%q = %v %v", s, d, err)
		}
	}
	for _, s := range []string{"", "0", "-1s", "2h", "NaN", "abc", "1e400", "15", "0.5", "3600001", "-5000"} {
		if _, err := ParseTimeout(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// JoinOffsets reports the union of the committed and log answers and the
// owners' partitions, in order, with the member of each; an errored
// commit counts as none, and no lag is made up from the facts.
func TestJoinOffsets(t *testing.T) {
	t.Parallel()
	got := JoinOffsets(
		map[string]map[int32]Committed{"a": {0: {Offset: 5}, 1: {Offset: 1, Err: "NOT_COORDINATOR"}}, "b": {0: {Offset: 0}}},
		map[string]map[int32]LogOffsets{"a": {0: {Start: 0, End: 10}, 2: {Start: -1, End: -1, Err: "NOT_LEADER"}}, "b": {0: {Start: 0, End: 3}}},
		map[string]string{"a/2": "m1", "c/4": "m2", "bad": "m3"})
	want := []PartitionOffsets{
		{Topic: "a", Partition: 0, Committed: 5, Start: 0, End: 10},
		{Topic: "a", Partition: 1, Committed: -1, Start: -1, End: -1},
		{Topic: "a", Partition: 2, Committed: -1, Start: -1, End: -1, LogErr: "NOT_LEADER", Member: "m1"},
		{Topic: "b", Partition: 0, Committed: 0, Start: 0, End: 3},
		{Topic: "c", Partition: 4, Committed: -1, Start: -1, End: -1, Member: "m2"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got := JoinOffsets(nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("nothing to join: %#v, want an empty list", got)
	}
}

func TestClassifyIsOneLine(t *testing.T) {
	t.Parallel()
	be := Classify("h:1", &multiLineErr{}, time.Second, false)
	if strings.Contains(be.Error(), "\n") || !strings.HasPrefix(be.Error(), "broker h:1: ") {
		t.Errorf("%q", be.Error())
	}
}

type multiLineErr struct{}

func (*multiLineErr) Error() string { return "first\nsecond" }

func TestSoftwareVersionSanitised(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v1.2.3": "v1.2.3", "dev (abc)": "devabc", "": "dev", "-.": "dev", "1.0-rc1+meta": "1.0-rc1meta"} {
		if got := softwareVersion(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestSaveConfigThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "kaasctl.yaml")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("profiles: {}\n"), 0o600)
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if err := SaveConfig(link, parse(t, sampleConfig)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
	back, _, err := LoadConfig(real)
	if err != nil || back.Current != "prod" {
		t.Fatalf("target not updated: %+v %v", back, err)
	}
}

// Classify turns a request error into a BrokerError with a short reason.
// saslOn says the client logs in with SASL. It knows no stage beyond what
// the error tells; the client's own classification also knows how far the
// broker's connection got.
func Classify(broker string, err error, timeout time.Duration, saslOn bool) *BrokerError {
	ci := ConnInfo{Timeout: timeout}
	if saslOn {
		ci.Mechanism = "SASL"
	}
	return ClassifyConn(broker, err, ci)
}
