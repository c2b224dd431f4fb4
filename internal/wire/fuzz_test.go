package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(sampleConfig))
	f.Add([]byte(""))
	f.Add([]byte("profiles: null\n"))
	f.Add([]byte("current: a\nprofiles:\n  a:\n    brokers: \"x:1,y:2\"\n"))
	f.Add([]byte("profiles:\n  a:\n    tls: {enabled: false, caFile: c}\n    sasl: {mechanism: scram-sha-256, user: u, passwordFile: /p}\n"))
	f.Add([]byte("profiles:\n  a: &x {brokers: [a:1]}\n  b: *x\n"))
	f.Add([]byte("profiles:\n  ../x: {}\n"))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte("profiles:\n  a:\n    sasl: {Password: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("fuzz.yaml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\x00") {
				t.Fatalf("error carries a NUL: %q", err)
			}
			return
		}
		if cfg.Profiles == nil {
			t.Fatal("nil profiles on success")
		}
		// Whatever parses must resolve for each profile or fail cleanly,
		// and must survive a save/load round trip.
		for _, name := range cfg.Names() {
			_, _ = Resolve(Input{Flags: map[string]string{KeyProfile: name}}, cfg, "fuzz.yaml", Source{}, true)
		}
		out, err := cfg.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseConfig("back.yaml", out)
		if err != nil {
			t.Fatalf("a config kaasctl parsed does not parse back after marshal: %v\n%s", err, out)
		}
		if len(back.Profiles) != len(cfg.Profiles) || back.Current != cfg.Current {
			t.Fatalf("round trip changed the config: %+v vs %+v", back, cfg)
		}
	})
}

func FuzzParseMaxVersions(f *testing.F) {
	for _, s := range []string{"kaas", "latest", "3.6", "v2.8.1", "0.10.2.0", "4.0", "", "3", "v", "9.9.9", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMaxVersions(s)
		if err == nil && v == nil {
			t.Fatal("nil versions without an error")
		}
		if err != nil && len(err.Error()) > 400 {
			t.Fatalf("error too long (%d bytes)", len(err.Error()))
		}
	})
}

func FuzzParseTimeout(f *testing.F) {
	for _, s := range []string{"10s", "1", "0.5", "1h", "-1", "NaN", "Inf", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeout(s)
		if err == nil && (d <= 0 || d > 3600e9) {
			t.Fatalf("%q gave %v", s, d)
		}
	})
}

func TestSaveConfigRefusesUnreadable(t *testing.T) {
	t.Parallel()
	// A profile name the parser rejects can only come from code; the
	// writer refuses to produce a file it cannot read back.
	cfg := &Config{Profiles: map[string]*Profile{"bad name": {}}}
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := SaveConfig(p, cfg); err == nil {
		t.Fatal("saved an unreadable config")
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("file written anyway")
	}
}
