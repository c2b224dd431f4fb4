package wire

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestProfileEditSetsAndUnsets(t *testing.T) {
	t.Parallel()
	on := true
	orig := Profile{
		Brokers: BrokerList{"a:9092"}, DataDir: "/data", Timeout: "5s",
		TLS:  &TLSProfile{Enabled: &on, CAFile: "ca.pem"},
		SASL: &SASLProfile{Mechanism: "PLAIN", User: "ops", PasswordEnv: "OPS_PW"},
	}
	e := ProfileEdit{
		Unset: []string{KeyTLSCA, KeySASL, KeyDataDir},
		Set:   map[string]string{KeyBrokers: "b:9092, c:9092", KeyTLSInsecure: "true", KeyTimeout: "2s", KeyClusterDir: "/cl"},
	}
	got, err := e.Apply(orig)
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{
		Brokers: BrokerList{"b:9092", "c:9092"}, ClusterDir: "/cl", Timeout: "2s",
		TLS: &TLSProfile{Enabled: &on, InsecureSkipVerify: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Apply =\n%+v\nwant\n%+v (tls %+v)", got, want, got.TLS)
	}
	if orig.TLS.CAFile != "ca.pem" || orig.SASL == nil || orig.DataDir != "/data" {
		t.Fatalf("Apply changed the profile it was given: %+v tls %+v", orig, orig.TLS)
	}
}

func TestProfileEditDropsEmptyBlocksAndNormalizes(t *testing.T) {
	t.Parallel()
	p := Profile{TLS: &TLSProfile{CAFile: "ca.pem"}, SASL: &SASLProfile{User: "u"}}
	got, err := ProfileEdit{Unset: []string{KeyTLSCA, KeySASLUser}}.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.TLS != nil || got.SASL != nil {
		t.Fatalf("emptied blocks kept: tls %+v sasl %+v", got.TLS, got.SASL)
	}
	got, err = ProfileEdit{Set: map[string]string{KeySASLMechanism: "scram_sha512", KeySASLUser: "ops", KeyTLS: "false"}}.Apply(Profile{})
	if err != nil {
		t.Fatal(err)
	}
	if got.SASL == nil || got.SASL.Mechanism != "SCRAM-SHA-512" || got.SASL.User != "ops" {
		t.Fatalf("sasl %+v", got.SASL)
	}
	if got.TLS == nil || got.TLS.Enabled == nil || *got.TLS.Enabled {
		t.Fatalf("--tls=false not kept as an explicit false: %+v", got.TLS)
	}
	// Unsetting a field of a block that is not there is no change.
	got, err = ProfileEdit{Unset: []string{KeyTLSCert, KeySASLPasswordFil}}.Apply(Profile{DataDir: "/d"})
	if err != nil || !reflect.DeepEqual(got, Profile{DataDir: "/d"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestProfileEditCheckNamesTheFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    ProfileEdit
		want string
	}{
		{ProfileEdit{Unset: []string{"colour"}}, `--unset "colour": not a profile setting; use one of brokers, data-dir`},
		{ProfileEdit{Set: map[string]string{KeySASLMechanism: "GSSAPI"}}, "unknown SASL mechanism"},
		{ProfileEdit{Set: map[string]string{KeySASLPasswordEnv: "hunter2!"}}, "--sasl-password-env takes the NAME"},
		{ProfileEdit{Set: map[string]string{KeyTimeout: "5"}}, "--timeout: "},
		{ProfileEdit{Set: map[string]string{KeyMaxVersions: "nope"}}, "--max-versions: "},
		{ProfileEdit{Set: map[string]string{KeyTLS: "maybe"}}, `--tls: "maybe" is not true or false`},
		{ProfileEdit{Set: map[string]string{"colour": "red"}}, "--colour: not a profile setting"},
	} {
		err := tc.e.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want %q", tc.e, err, tc.want)
		}
		if strings.Contains(tc.want, "NAME") && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the rejected password-like value is repeated: %v", err)
		}
		if _, aerr := tc.e.Apply(Profile{}); aerr == nil {
			t.Errorf("Apply(%+v) accepted what Check refuses", tc.e)
		}
	}
}

func TestConfigSetUseDeleteProfile(t *testing.T) {
	t.Parallel()
	cfg := &Config{Profiles: map[string]*Profile{}}
	p, created, err := cfg.SetProfile("lab", ProfileEdit{Set: map[string]string{KeyBrokers: "k:9092"}}, false)
	if err != nil || !created || cfg.Current != "lab" || p.Brokers[0] != "k:9092" {
		t.Fatalf("first profile: %+v created %v current %q err %v", p, created, cfg.Current, err)
	}
	if _, created, err = cfg.SetProfile("prod", ProfileEdit{Set: map[string]string{KeyDataDir: "/d"}}, false); err != nil || !created || cfg.Current != "lab" {
		t.Fatalf("a second profile became current (%q) or failed: %v", cfg.Current, err)
	}
	if _, created, err = cfg.SetProfile("prod", ProfileEdit{Set: map[string]string{KeyTimeout: "3s"}}, true); err != nil || created || cfg.Current != "prod" {
		t.Fatalf("update with use: created %v current %q err %v", created, cfg.Current, err)
	}
	if cfg.Profiles["prod"].DataDir != "/d" || cfg.Profiles["prod"].Timeout != "3s" {
		t.Fatalf("update lost a setting: %+v", cfg.Profiles["prod"])
	}
	if _, _, err = cfg.SetProfile("bad", ProfileEdit{Set: map[string]string{KeyBrokers: "nohost"}}, false); err == nil || !strings.Contains(err.Error(), `profile "bad": brokers:`) {
		t.Fatalf("invalid broker accepted: %v", err)
	}
	if _, ok := cfg.Profiles["bad"]; ok {
		t.Fatal("a refused profile was stored")
	}
	if err := cfg.UseProfile("lab"); err != nil || cfg.Current != "lab" {
		t.Fatalf("use: %v current %q", err, cfg.Current)
	}
	var up *UnknownProfileError
	if err := cfg.UseProfile("nope"); !errors.As(err, &up) || up.Known != "lab, prod" {
		t.Fatalf("use of an unknown profile: %v", err)
	}
	if was, err := cfg.DeleteProfile("lab"); err != nil || !was || cfg.Current != "" {
		t.Fatalf("delete current: was %v err %v current %q", was, err, cfg.Current)
	}
	if was, err := cfg.DeleteProfile("prod"); err != nil || was || len(cfg.Profiles) != 0 {
		t.Fatalf("delete: was %v err %v left %v", was, err, cfg.Profiles)
	}
	if _, err := cfg.DeleteProfile("prod"); !errors.As(err, &up) || up.Known != "none" {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestProfileValuesFeedResolve(t *testing.T) {
	t.Parallel()
	// Every key set through an edit is read back by Resolve from the profile.
	e := ProfileEdit{Set: map[string]string{KeyBrokers: "k:1", KeyTLSCA: "ca", KeyTLSServerName: "kaas", KeySASLMechanism: "PLAIN",
		KeySASLUser: "u", KeySASLPasswordFil: "/pw", KeyTimeout: "3s", KeyMaxVersions: "kaas", KeyDataDir: "/d", KeyKaasVersion: "0.2.18"}}
	p, err := e.Apply(Profile{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Current: "x", Profiles: map[string]*Profile{"x": &p}}
	s, err := Resolve(Input{}, cfg, "/c", Source{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if s.Brokers[0] != "k:1" || s.TLS.CAFile != "ca" || !s.TLS.Enabled || s.TLS.ServerName != "kaas" || s.SASL.User != "u" ||
		s.SASL.PasswordFile != "/pw" || s.Timeout.String() != "3s" || s.DataDir != "/d" || s.KaasVersion != "0.2.18" {
		t.Fatalf("resolved %+v", s)
	}
	for _, k := range []string{KeyBrokers, KeyTLSCA, KeySASLUser, KeyTimeout} {
		if s.Sources[k].Kind != "profile" {
			t.Errorf("%s from %v, want the profile", k, s.Sources[k])
		}
	}
}

func TestCheckConnection(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	cc, err := CheckConnection(context.Background(), settings(t, []string{cl.ListenAddrs()[0], dead}, map[string]string{KeyTimeout: "2s"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.Answered) != 1 || cc.Answered[0] != cl.ListenAddrs()[0] || len(cc.Failed) != 1 || cc.Failed[0].Broker != dead {
		t.Fatalf("answered %v failed %v", cc.Answered, cc.Failed)
	}
	if len(cc.Brokers) != 3 || len(cc.Caps) == 0 {
		t.Fatalf("brokers %v caps %v", cc.Brokers, cc.Caps)
	}
	if _, err := CheckConnection(context.Background(), &Settings{}); err != ErrNoBrokers {
		t.Fatalf("no brokers: %v", err)
	}
}
