package wire

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kaasAuth plays a kaas broker with SASL required (sandbox.KaasAuth).
type kaasAuth = sandbox.KaasAuth

const kaasPlainReason = sandbox.KaasPlainRefusal

// checkOne runs Check against one seed and returns its classified failure.
func checkOne(t *testing.T, s *Settings) *BrokerError {
	t.Helper()
	c := dial(t, s)
	_, bad, err := c.Check(context.Background())
	t.Log(err)
	if err == nil || len(bad) != 1 {
		t.Fatalf("Check succeeded or did not name one broker: %v %v", err, bad)
	}
	if contains(err.Error(), "\n") {
		t.Fatalf("not one line: %q", err)
	}
	return bad[0]
}

func wantCause(t *testing.T, be *BrokerError, stage Stage, subs ...string) {
	t.Helper()
	if be.Stage != stage {
		t.Errorf("stage %q, want %q: %v", be.Stage, stage, be)
	}
	msg := be.Error()
	for _, s := range subs {
		if !contains(msg, s) {
			t.Errorf("%q lacks %q", msg, s)
		}
	}
	if be.Fix == "" {
		t.Errorf("no fix: %v", be)
	}
}

func saslFlags(mech, user string, extra ...string) map[string]string {
	f := map[string]string{KeySASLMechanism: mech, KeySASLUser: user, KeySASLPasswordEnv: "PW", KeyTimeout: "3s"}
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i]] = extra[i+1]
	}
	return f
}

var pwEnv = map[string]string{"PW": "s3cret-pw"}

func kaasCluster(t *testing.T, k kaasAuth, opts ...kfake.Opt) *kfake.Cluster {
	cl := newCluster(t, append([]kfake.Opt{kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw")}, opts...)...)
	if k.Users == nil {
		k.Users = map[string]bool{"ops": true}
	}
	k.Install(cl)
	return cl
}

func TestKaasSCRAMWorks(t *testing.T) {
	t.Parallel()
	cl := kaasCluster(t, kaasAuth{MalformedKey: -1})
	c := dial(t, settings(t, cl.ListenAddrs(), saslFlags("SCRAM-SHA-512", "ops"), pwEnv))
	if _, _, err := c.Check(context.Background()); err != nil {
		t.Fatalf("the right login against the kaas emulation: %v", err)
	}
}

func TestKaasWrongPasswordIsALoginFailure(t *testing.T) {
	t.Parallel()
	cl := kaasCluster(t, kaasAuth{WrongPassword: true, MalformedKey: -1})
	be := checkOne(t, settings(t, cl.ListenAddrs(), saslFlags("SCRAM-SHA-512", "ops"), map[string]string{"PW": "nope"}))
	wantCause(t, be, StageSASLAuth, cl.ListenAddrs()[0], "SASL authenticate failed", "wrong user or password", `"scram: authentication failed"`, "--sasl-user")
	if contains(be.Error(), "nope") {
		t.Errorf("password printed: %v", be)
	}
}

func TestKaasUnknownUser(t *testing.T) {
	t.Parallel()
	cl := kaasCluster(t, kaasAuth{MalformedKey: -1})
	be := checkOne(t, settings(t, cl.ListenAddrs(), saslFlags("SCRAM-SHA-512", "mallory"), pwEnv))
	wantCause(t, be, StageSASLAuth, "unknown user", `scram: unknown user \"mallory\"`)
}

func TestKaasPLAINRefusalKeepsTheReason(t *testing.T) {
	t.Parallel()
	cl := kaasCluster(t, kaasAuth{MalformedKey: -1})
	be := checkOne(t, settings(t, cl.ListenAddrs(), saslFlags("PLAIN", "ops"), pwEnv))
	wantCause(t, be, StageSASLAuth, "refused PLAIN", kaasPlainReason, "service-account token", "--sasl-password-file")
	if contains(be.Error(), "not enabled") {
		t.Errorf("PLAIN is enabled in the handshake, the error says otherwise: %v", be)
	}
}

func TestKaasSCRAM256NotEnabled(t *testing.T) {
	t.Parallel()
	cl := kaasCluster(t, kaasAuth{MalformedKey: -1})
	be := checkOne(t, settings(t, cl.ListenAddrs(), saslFlags("SCRAM-SHA-256", "ops"), pwEnv))
	wantCause(t, be, StageSASLHandshake, "SCRAM-SHA-256 not enabled", "UNSUPPORTED_SASL_MECHANISM", "SCRAM-SHA-512")
}

func TestKaasNoSASLOnASASLListener(t *testing.T) {
	t.Parallel()
	for _, key := range []kmsg.Key{kmsg.Metadata, kmsg.ApiVersions} {
		t.Run(key.Name(), func(t *testing.T) {
			cl := kaasCluster(t, kaasAuth{MalformedKey: int16(key)})
			be := checkOne(t, settings(t, cl.ListenAddrs(), map[string]string{KeyTimeout: "3s"}, nil))
			want := StageRequest
			if key == kmsg.ApiVersions {
				want = StageAPIVersions
			}
			wantCause(t, be, want, "malformed response", "probably requires SASL", "SCRAM-SHA-512")
			if key == kmsg.Metadata && !contains(be.Error(), "response did not contain enough data to be valid") {
				t.Errorf("the client's own error is dropped: %v", be)
			}
		})
	}
	// kfake's own answer (the connection closed) says the same.
	cl := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
	be := checkOne(t, settings(t, cl.ListenAddrs(), map[string]string{KeyTimeout: "3s"}, nil))
	wantCause(t, be, StageRequest, "requires SASL")
}

// plainListener plays a kaas plaintext port to a TLS client: it reads the
// ClientHello as a frame too large to be a request and hangs up.
func plainListener(t *testing.T) string {
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
			go func() {
				buf := make([]byte, 4)
				io.ReadFull(conn, buf)
				conn.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// A TLS mismatch with SASL flags set is a TLS problem, never the password.
func TestTLSMismatchIsNotBlamedOnThePassword(t *testing.T) {
	t.Parallel()
	caPath, srv := tlsFiles(t)
	t.Run("TLS to a plaintext port", func(t *testing.T) {
		addr := plainListener(t)
		for _, flags := range []map[string]string{saslFlags("SCRAM-SHA-512", "ops", KeyTLSCA, caPath), {KeyTLSCA: caPath, KeyTimeout: "3s"}} {
			be := checkOne(t, settings(t, []string{addr}, flags, pwEnv))
			wantCause(t, be, StageTLS, addr, "TLS handshake failed", "drop --tls")
			if contains(be.Error(), "password") || contains(be.Error(), "SASL") {
				t.Errorf("blames the login: %v", be)
			}
		}
	})
	t.Run("TLS to a plaintext port that waits", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var held []net.Conn
		done := false
		t.Cleanup(func() {
			ln.Close()
			mu.Lock()
			defer mu.Unlock()
			done = true
			for _, c := range held {
				c.Close()
			}
		})
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				if done {
					c.Close()
				} else {
					held = append(held, c) // read nothing, answer nothing: a frame too large still arriving
				}
				mu.Unlock()
			}
		}()
		addr := ln.Addr().String()
		be := checkOne(t, settings(t, []string{addr}, saslFlags("SCRAM-SHA-512", "ops", KeyTLSCA, caPath, KeyTimeout, "1s"), pwEnv))
		wantCause(t, be, StageTLS, "TLS handshake failed", "no answer within 1s", "drop --tls")
		if contains(be.Error(), "password") {
			t.Errorf("blames the login: %v", be)
		}
	})
	t.Run("plaintext to a TLS port", func(t *testing.T) {
		cl := newCluster(t, kfake.NumBrokers(1), kfake.TLS(srv), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "s3cret-pw"))
		addr := cl.ListenAddrs()[0]
		for _, flags := range []map[string]string{saslFlags("SCRAM-SHA-512", "ops"), {KeyTimeout: "3s"}} {
			be := checkOne(t, settings(t, []string{addr}, flags, pwEnv))
			wantCause(t, be, StageAPIVersions, addr, "ApiVersions failed", "add --tls")
			if contains(be.Error(), "password") || contains(be.Error(), "SASL") {
				t.Errorf("blames the login: %v", be)
			}
		}
		// And with TLS on, the same listener logs in.
		c := dial(t, settings(t, []string{addr}, saslFlags("SCRAM-SHA-512", "ops", KeyTLSCA, caPath), pwEnv))
		if _, _, err := c.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStagesInOrder(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &osSyscallErr{syscall.ECONNREFUSED}}
	cases := []struct {
		name  string
		err   error
		ci    ConnInfo
		stage Stage
		subs  []string
	}{
		{"refused with SASL on", fmt.Errorf("unable to dial: %w", refused), ConnInfo{Mechanism: "SCRAM-SHA-512", Stage: StageDial}, StageDial, []string{"connection refused"}},
		{"host not found", fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "kaas-9"}}), ConnInfo{}, StageDial, []string{"host not found", "kaas-9"}},
		{"untrusted certificate, SASL on", fmt.Errorf("unable to dial: %w", &x509.UnknownAuthorityError{}), ConnInfo{TLS: true, Mechanism: "SCRAM-SHA-512", Stage: StageTLS}, StageTLS, []string{"not trusted", "--tls-ca"}},
		{"TLS alert read in plaintext", errors.New("invalid large response size 352518912 > limit 104857600; the first three bytes received appear to be a tls alert record for TLS v1.2; is this a plaintext connection speaking to a tls endpoint?"), ConnInfo{Stage: StageAPIVersions}, StageAPIVersions, []string{"TLS alert", "add --tls"}},
		{"timeout during TLS", context.DeadlineExceeded, ConnInfo{TLS: true, Timeout: 2 * time.Second, Stage: StageTLS}, StageTLS, []string{"no answer within 2s", "drop --tls"}},
		{"timeout on a request", context.DeadlineExceeded, ConnInfo{Timeout: 2 * time.Second, Stage: StageRequest, Mechanism: "SCRAM-SHA-512"}, StageRequest, []string{"no answer within 2s", "--timeout"}},
		{"dial timeout (a host that swallows packets)", fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}), ConnInfo{Timeout: 2 * time.Second, Stage: StageDial}, StageDial, []string{"no answer within 2s", "firewall"}},
		{"redial at the deadline after a silent ApiVersions", fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}), ConnInfo{Timeout: 2 * time.Second, Stage: StageAPIVersions}, StageAPIVersions, []string{"no answer within 2s", "hung"}},
		{"login closed", io.EOF, ConnInfo{Mechanism: "SCRAM-SHA-512", Stage: StageSASLAuth}, StageSASLAuth, []string{"wrong user or password"}},
		{"SASL_AUTHENTICATION_FAILED with a message", fmt.Errorf("%w: %s", kerr.SaslAuthenticationFailed, "bad proof"), ConnInfo{Mechanism: "SCRAM-SHA-512"}, StageSASLAuth, []string{`"bad proof"`}},
		{"closed after a login", io.EOF, ConnInfo{Mechanism: "SCRAM-SHA-512", Stage: StageRequest}, StageRequest, []string{"connection closed by the broker"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := ClassifyConn("kaas-0:9092", c.err, c.ci)
			if be.Stage != c.stage {
				t.Errorf("stage %q want %q: %v", be.Stage, c.stage, be)
			}
			for _, s := range c.subs {
				if !contains(be.Error(), s) {
					t.Errorf("%q lacks %q", be.Error(), s)
				}
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

type osSyscallErr struct{ errno syscall.Errno }

func (e *osSyscallErr) Error() string { return "connect: " + e.errno.Error() }
func (e *osSyscallErr) Unwrap() error { return e.errno }

func TestStageTrackerNames(t *testing.T) {
	t.Parallel()
	tr := newStageTracker(false)
	tr.OnBrokerWrite(metaOf(-2147483648, "10.0.0.1", 9092), 18, 0, 0, 0, nil)
	tr.OnBrokerConnect(metaOf(-2147483648, "10.0.0.1", 9092), 0, &net.TCPConn{}, errors.New("init failed"))
	tr.OnBrokerWrite(metaOf(2, "10.0.0.2", 9092), 36, 0, 0, 0, nil)
	tr.OnBrokerRead(metaOf(1, "10.0.0.3", 9092), 17, 0, 0, 0, nil)
	for name, want := range map[string]Stage{
		"10.0.0.1:9092": StageAPIVersions, "node 2 (10.0.0.2:9092)": StageSASLAuth, "node 1": StageSASLHandshake,
		"10.0.0.9:9092,10.0.0.3:9092": StageSASLHandshake, "10.0.0.9:1,10.0.0.8:1": StageSASLHandshake, "other:1": "",
	} {
		if got := tr.named(name); got != want {
			t.Errorf("%s: %q want %q", name, got, want)
		}
	}
	if tr.node(-2147483648) != StageAPIVersions {
		t.Error("seed node id")
	}
}

func TestConnectErrorSaysOneCauseOnce(t *testing.T) {
	t.Parallel()
	mk := func(b string) *BrokerError {
		return &BrokerError{Broker: b, Stage: StageTLS, Reason: "the broker does not speak TLS", Fix: fixNotTLS, Err: io.EOF}
	}
	e := &ConnectError{Brokers: []*BrokerError{mk("a:1"), mk("b:1")}}
	if got := e.Error(); strings.Count(got, "does not speak TLS") != 1 || !contains(got, "a:1, b:1") {
		t.Errorf("%q", got)
	}
	other := &BrokerError{Broker: "c:1", Stage: StageDial, Reason: "connection refused"}
	e.Brokers = append(e.Brokers, other)
	if got := e.Error(); strings.Count(got, " | ") != 2 {
		t.Errorf("%q", got)
	}
}

func metaOf(node int32, host string, port int32) kgo.BrokerMetadata {
	return kgo.BrokerMetadata{NodeID: node, Host: host, Port: port}
}

// A broker that accepts the connection and never answers: the dial worked,
// so the failure is the silent first request (ApiVersions), not the dial.
func TestAcceptedButSilentIsNotADialFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	be := checkOne(t, settings(t, []string{ln.Addr().String()}, map[string]string{KeyTimeout: "1s"}, nil))
	if be.Stage != StageAPIVersions || contains(be.Error(), "firewall") || !contains(be.Error(), "no answer within 1s") || !contains(be.Error(), "hung") {
		t.Errorf("stage %q: %v", be.Stage, be)
	}
}

// node is the last stage of a node (seed connections have the ids kgo gives
// them, math.MinInt32 + the seed's index).
func (t *stageTracker) node(id int32) Stage {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byNode[id].effective()
}
