package commands

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The live commands through SASL (SCRAM-SHA-256) on kfake: groups list,
// groups describe, doctor (brokers only); a wrong password fails in one
// line naming SASL.
func TestLiveCommandsSASL(t *testing.T) {
	t.Parallel()
	kf, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(2, "orders"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.SASL(scram.Auth{User: "ops", Pass: "s3cret-pw"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	os.AddOffset("orders", 0, 0, -1)
	os.AddOffset("orders", 1, 0, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "sasl-app", os); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(kf.ListenAddrs(), ","), "KAASCTL_SASL_MECHANISM": "scram-sha-256",
		"KAASCTL_SASL_USER": "ops", "KAASCTL_SASL_PASSWORD": "s3cret-pw", "KAASCTL_TIMEOUT": "3s"}
	r := runCLI(t, "", env, "groups", "list", "-o", "json")
	v := decodeJSON[views.GroupsListView](t, r)
	if r.Code != 0 || v.Sources.Mode != "live" || len(v.Sources.Brokers) != 3 {
		t.Fatalf("groups list: exit %d sources %+v\n%s", r.Code, v.Sources, r.Err)
	}
	row := rowOf(t, v, "sasl-app")
	if len(row.Live.ListedBy) != 1 || row.Live.State != "Empty" {
		t.Errorf("row %+v live %+v", row, row.Live)
	}
	r = runCLI(t, "", env, "groups", "describe", "sasl-app", "-o", "json")
	dv := decodeJSON[views.GroupsDescribeLiveView](t, r)
	d := describeOf(t, dv, "sasl-app")
	if r.Code != 0 || len(d.Partitions) != 2 || d.Partitions[0].Committed != 0 || !d.LagKnown {
		t.Errorf("describe: exit %d %+v\n%s", r.Code, d.Partitions, r.Err)
	}
	r = runCLI(t, "", env, "doctor", "-o", "json")
	dj := decodeJSON[doctorJSON](t, r)
	if r.Code != 0 || dj.Mode != "live" {
		t.Errorf("doctor: exit %d mode %s findings %+v\n%s", r.Code, dj.Mode, dj.Findings, r.Err)
	}
	env["KAASCTL_SASL_PASSWORD"] = "wrong"
	r = runCLI(t, "", env, "groups", "list")
	if r.Code == 0 || !strings.Contains(r.Err, "SASL authenticate failed") || strings.Count(strings.TrimSpace(r.Err), "\n") > 3 {
		t.Errorf("wrong password: exit %d\n%s", r.Code, r.Err)
	}
	if strings.Contains(r.Err+r.Out, "wrong") && strings.Contains(r.Err, "=wrong") {
		t.Errorf("password echoed:\n%s", r.Err)
	}
}

// Kafka's spelling of the connection: --bootstrap-server, a client
// properties file (--command-config) with SCRAM in sasl.jaas.config, and
// --timeout in milliseconds. A JKS truststore is refused by name.
func TestLiveCommandConfigSASL(t *testing.T) {
	t.Parallel()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	dir := t.TempDir()
	props := writeFile(t, dir, "client.properties", "# as for kafka-consumer-groups.sh\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"ops\" password=\"s3cret-pw\";\nclient.id=ops\n")
	boot := kf.ListenAddrs()[0]
	r := runCLI(t, "", nil, "groups", "list", "--bootstrap-server", boot, "--command-config", props, "--timeout", "3000", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Err, "client.id") {
		t.Fatalf("groups list with --command-config: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if strings.Contains(r.Out+r.Err, "s3cret-pw") {
		t.Error("password printed")
	}
	// A wrong password in the file: the fix names the file, not the flags.
	wrong := writeFile(t, dir, "wrong.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"ops\" password=\"not-it\";\n")
	r = runCLI(t, "", nil, "groups", "list", "--bootstrap-server", boot, "--command-config", wrong, "--timeout", "3000")
	if r.Code == 0 || !strings.Contains(r.Err, "--command-config file "+wrong) || strings.Contains(r.Err, "--sasl-password-env") {
		t.Errorf("wrong password in --command-config: exit %d\n%s", r.Code, r.Err)
	}
	bad := writeFile(t, dir, "bad.properties", "security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\nssl.truststore.password=changeit\n")
	r = runCLI(t, "", nil, "groups", "list", "--bootstrap-server", boot, "--command-config", bad)
	if r.Code != 2 || !strings.Contains(r.Err, "JKS and PKCS12 stores are not supported") || strings.Contains(r.Err, "changeit") {
		t.Errorf("JKS: exit %d\n%s", r.Code, r.Err)
	}
}

// A new user's connection mistakes against a kaas broker with SASL
// required (sandbox.KaasAuth answers as kaas does): each prints, in one line
// on stderr, the broker, the stage that failed first and the real cause.
func TestConnectionMistakesAsKaasAnswers(t *testing.T) {
	t.Parallel()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	sandbox.KaasAuth{Users: map[string]bool{"ops": true}, MalformedKey: -1}.Install(kf)
	noSASL, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer noSASL.Close()
	sandbox.KaasAuth{Users: map[string]bool{"ops": true}, MalformedKey: int16(kmsg.Metadata)}.Install(noSASL)
	tlsKf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(selfSignedTLS(t)), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer tlsKf.Close()
	wrongPw, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer wrongPw.Close()
	sandbox.KaasAuth{Users: map[string]bool{"ops": true}, WrongPassword: true, MalformedKey: -1}.Install(wrongPw)
	plain := closingListener(t)

	addr, tlsAddr, wrongAddr := kf.ListenAddrs()[0], tlsKf.ListenAddrs()[0], wrongPw.ListenAddrs()[0]
	scram := []string{"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "ops", "--sasl-password-env", "PW", "--timeout", "3s"}
	cases := []struct {
		name   string
		args   []string
		want   []string
		unwant []string
	}{
		{"wrong password", append([]string{"-b", wrongAddr}, scram...),
			[]string{wrongAddr, "SASL authenticate failed: wrong user or password", `"scram: authentication failed"`}, []string{"NETWORK_EXCEPTION: The server"}},
		{"unknown user", []string{"-b", addr, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "mallory", "--sasl-password-env", "PW"},
			[]string{"SASL authenticate failed: unknown user", `scram: unknown user \"mallory\"`}, nil},
		{"PLAIN outside Kubernetes", []string{"-b", addr, "--sasl-mechanism", "PLAIN", "--sasl-user", "ops", "--sasl-password-env", "PW"},
			[]string{"SASL authenticate failed: the broker refused PLAIN", sandbox.KaasPlainRefusal, "serviceaccount/token"}, []string{"not enabled"}},
		{"no SASL on a SASL listener", []string{"-b", noSASL.ListenAddrs()[0]},
			[]string{"request failed: malformed response (this listener probably requires SASL)", "response did not contain enough data to be valid"}, nil},
		{"plaintext to the TLS port, SASL set", append([]string{"-b", tlsAddr}, scram...),
			[]string{"ApiVersions failed", "add --tls"}, []string{"password", "authenticate"}},
		{"TLS to the plaintext port, SASL set", append([]string{"-b", plain, "--tls"}, scram...),
			[]string{"TLS handshake failed", "drop --tls"}, []string{"password", "authenticate"}},
	}
	env := map[string]string{"PW": "s3cret-pw"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "wrong password" {
				env = map[string]string{"PW": "wrong-pw"}
				defer func() { env = map[string]string{"PW": "s3cret-pw"} }()
			}
			for _, cmd := range [][]string{{"config", "check"}, {"groups", "list"}} {
				r := runCLI(t, "", env, append(cmd, c.args...)...)
				line := strings.TrimSpace(r.Err)
				if r.Code != 1 || strings.Contains(line, "\n") {
					t.Errorf("%s: exit %d, want 1 and one line:\n%s", cmd, r.Code, r.Err)
				}
				for _, w := range c.want {
					if !strings.Contains(line, w) {
						t.Errorf("%s: %q lacks %q", cmd, line, w)
					}
				}
				for _, u := range c.unwant {
					if strings.Contains(line, u) {
						t.Errorf("%s: %q says %q", cmd, line, u)
					}
				}
				if strings.Contains(line, "wrong-pw") || strings.Contains(line, "s3cret-pw") {
					t.Errorf("password printed: %s", line)
				}
			}
		})
	}
}

// closingListener is a plaintext port that reads a TLS ClientHello as a
// request too large to take and hangs up.
func closingListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4)
			io.ReadFull(conn, buf)
			conn.Close()
		}
	}()
	return ln.Addr().String()
}

func selfSignedTLS(t *testing.T) *tls.Config {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaas.test"}, DNSNames: []string{"kaas.test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
}

// help connection says what kaas supports and has one line per connection
// error with its fix.
func TestHelpConnectionErrors(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "help", "connection")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	for _, want := range []string{"SCRAM-SHA-512", "/var/run/secrets/kubernetes.io/serviceaccount/token", "PLAIN mechanism requires kubernetes client (SA JWT auth)",
		"scram: authentication failed", "response did not contain enough data to be valid"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("help connection lacks %q", want)
		}
	}
	for _, stage := range []string{"dial:", "TLS handshake:", "ApiVersions:", "SASL handshake:", "SASL authenticate:", "request:"} {
		found := false
		for _, line := range strings.Split(r.Out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(strings.TrimSpace(line), stage) && strings.Count(line, "  ") > 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("no line for stage %q with its fix", stage)
		}
	}
}
