package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	t.Parallel()
	in := "# comment\n! also a comment\n  security.protocol = SASL_SSL\nsasl.mechanism:SCRAM-SHA-512\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    username=\"ops\" \\\n    password=\"p=a:s s\\\\\\\"w\";\n" +
		"key\\ with\\ blanks value\\tx\nunicode=\\u00e9t\\u00E9\nempty=\nlast=1\nlast=2\r\ncontinued.at.eof=a\\"
	p, err := ParseProperties([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"security.protocol": "SASL_SSL",
		"sasl.mechanism":    "SCRAM-SHA-512",
		"sasl.jaas.config":  `org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="p=a:s s\"w";`,
		"key with blanks":   "value\tx",
		"unicode":           "été",
		"empty":             "",
		"last":              "2",
		"continued.at.eof":  "a",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%q = %q, want %q", k, p[k], v)
		}
	}
	if len(p) != len(want) {
		t.Errorf("keys %v", p)
	}
	for _, bad := range []string{"k=\\u12", "k=\\uZZZZ", "\xff=1"} {
		if _, err := ParseProperties([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTranslateProperties(t *testing.T) {
	t.Parallel()
	tr := func(props map[string]string) (*CommandConfig, error) { return TranslateProperties(props) }
	cc, err := tr(map[string]string{
		"security.protocol":       "SASL_SSL",
		"sasl.mechanism":          "SCRAM-SHA-512",
		"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="s3cret";`,
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": "/etc/kafka/ca.pem",
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   "/etc/kafka/client.pem",
		"request.timeout.ms":      "30000",
		"client.id":               "ops-tool",
		"linger.ms":               "5",
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{KeyTLS: "true", KeySASLMechanism: "SCRAM-SHA-512", KeySASLUser: "ops", KeyTLSCA: "/etc/kafka/ca.pem",
		KeyTLSCert: "/etc/kafka/client.pem", KeyTLSKey: "/etc/kafka/client.pem", KeyTimeout: "30000"} {
		if cc.Settings[k] != v {
			t.Errorf("%s = %q, want %q", k, cc.Settings[k], v)
		}
	}
	if cc.password != "s3cret" {
		t.Error("password not taken from sasl.jaas.config")
	}
	if len(cc.Ignored) != 2 || !strings.HasPrefix(cc.Ignored[0], "client.id") || !strings.HasPrefix(cc.Ignored[1], "linger.ms: not a setting") {
		t.Errorf("ignored %q", cc.Ignored)
	}
	plain, err := tr(map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username=alice password=pw;`})
	if err != nil || plain.Settings[KeySASLMechanism] != "PLAIN" || plain.Settings[KeySASLUser] != "alice" || plain.password != "pw" || plain.Settings[KeyTLS] != "" {
		t.Fatalf("PLAIN: %+v %v", plain, err)
	}
	// Refused: what would change the connection's security if ignored.
	for name, c := range map[string]struct {
		props map[string]string
		want  string
	}{
		"jks default":     {map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/x.jks"}, "JKS and PKCS12 stores are not supported"},
		"pkcs12 keystore": {map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/x.p12"}, "ssl.keystore is PKCS12"},
		"gssapi default":  {map[string]string{"security.protocol": "SASL_SSL"}, "GSSAPI (Kerberos)"},
		"oauth":           {map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "not supported"},
		"module mismatch": {map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";`}, "needs org.apache.kafka.common.security.plain.PlainLoginModule"},
		"no password":     {map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a";`}, "needs username"},
		"inline pem":      {map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.certificates": "-----BEGIN"}, "inline PEM is not supported"},
		"key password":    {map[string]string{"security.protocol": "SSL", "ssl.key.password": "x"}, "encrypted private keys"},
		"no host check":   {map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""}, "no host name check"},
		"bad protocol":    {map[string]string{"security.protocol": "TLS"}, "use PLAINTEXT, SSL"},
		"bad timeout":     {map[string]string{"request.timeout.ms": "5"}, "request.timeout.ms"},
	} {
		if _, err := tr(c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// The file's settings rank below flags and above the environment; its
// password goes with its user and is never shown.
func TestCommandConfigResolve(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "client.properties")
	os.WriteFile(path, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"ops\" password=\"pw\";\n"), 0o600)
	cc, err := ReadCommandConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvName(KeySASLUser): "env-user", EnvName(KeyTimeout): "5s"}
	s, err := Resolve(Input{Flags: map[string]string{KeyBrokers: "h:1"}, Getenv: func(k string) string { return env[k] }, CommandConfig: cc}, nil, "", Source{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.SASL.User != "ops" || s.Sources[KeySASLUser].Kind != "command-config" || s.Timeout.String() != "5s" {
		t.Errorf("user %q from %v, timeout %v", s.SASL.User, s.Sources[KeySASLUser], s.Timeout)
	}
	if p, err := s.Password(); err != nil || p != "pw" {
		t.Errorf("password %q %v", p, err)
	}
	if st := s.PasswordStatus(); strings.Contains(st, "pw\"") || !strings.Contains(st, "command-config") {
		t.Errorf("status %q", st)
	}
	// A flag beats the file.
	s, err = Resolve(Input{Flags: map[string]string{KeyBrokers: "h:1", KeySASLUser: "flag-user", KeySASLPasswordEnv: "PW"}, Getenv: func(string) string { return "" }, CommandConfig: cc}, nil, "", Source{}, false)
	if err != nil || s.SASL.User != "flag-user" || s.SASL.PasswordEnv != "PW" {
		t.Fatalf("flag: %+v %v", s, err)
	}
	if _, err := ReadCommandConfig(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "--command-config") {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=b\n", "security.protocol=SASL_SSL\nsasl.jaas.config=x required username=\"u\" password=\"p\";", "k\\\n v", "\\u0041=\\u00", "#c\n!c\n:x", "a\\=b=c\\:d"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProperties(b)
		if err != nil {
			return
		}
		for k, v := range p {
			if strings.ContainsRune(k, '\uFFFD') && !strings.Contains(string(b), "\uFFFD") && !strings.Contains(string(b), `\u`) {
				t.Fatalf("key %q invented a replacement character", k)
			}
			_ = v
		}
		// Translation never panics and never echoes a password in errors.
		if cc, err := TranslateProperties(p); err == nil && cc.password != "" {
			for _, ig := range cc.Ignored {
				if strings.Contains(ig, cc.password) && len(cc.password) > 3 {
					t.Fatalf("password in a note: %q", ig)
				}
			}
		}
	})
}

// A long --timeout never trips kgo's 15-minute cap on the request
// overhead (the old "--timeout 3000" meant 50 minutes and failed).
func TestClientAcceptsLongTimeouts(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"3000", "1h", "16m"} {
		to, err := ParseTimeout(d)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewClient(&Settings{Brokers: []string{"127.0.0.1:1"}, Timeout: to, MaxVersions: "kaas"})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		c.Close()
	}
}
