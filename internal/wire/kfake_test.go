package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newCluster starts an in-process kfake cluster closed at test end.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// settings resolves settings for brokers with extra flags and env.
func settings(t testing.TB, brokers []string, flags map[string]string, env map[string]string) *Settings {
	t.Helper()
	f := map[string]string{KeyBrokers: joinComma(brokers)}
	for k, v := range flags {
		f[k] = v
	}
	s, err := Resolve(Input{Flags: f, Getenv: func(k string) string { return env[k] }}, nil, "", Source{}, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func joinComma(s []string) string {
	out := ""
	for i, b := range s {
		if i > 0 {
			out += ","
		}
		out += b
	}
	return out
}

func dial(t testing.TB, s *Settings) *Client {
	t.Helper()
	c, err := NewClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// versionLog records the version of every request kfake receives.
type versionLog struct {
	mu  sync.Mutex
	max map[int16]int16
	n   map[int16]int
}

func watchVersions(c *kfake.Cluster) *versionLog {
	vl := &versionLog{max: map[int16]int16{}, n: map[int16]int{}}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		vl.mu.Lock()
		defer vl.mu.Unlock()
		if v, ok := vl.max[req.Key()]; !ok || req.GetVersion() > v {
			vl.max[req.Key()] = req.GetVersion()
		}
		vl.n[req.Key()]++
		return nil, nil, false
	})
	return vl
}

// sentByAPI is how many requests of api (kmsg's name) c wrote, over every broker.
func sentByAPI(c *Client, api string) int64 {
	var n int64
	for _, b := range c.Counter.Snapshot() {
		n += b.ByAPI[api]
	}
	return n
}

func (vl *versionLog) get(k kmsg.Key) (int16, int) {
	vl.mu.Lock()
	defer vl.mu.Unlock()
	return vl.max[int16(k)], vl.n[int16(k)]
}

// commit creates group g with offsets via an admin commit.
func commit(t testing.TB, adm *kadm.Client, g string, topic string, offs map[int32]int64) {
	t.Helper()
	var os kadm.Offsets
	for p, o := range offs {
		os.AddOffset(topic, p, o, -1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := adm.CommitAllOffsets(ctx, g, os); err != nil {
		t.Fatalf("commit %s: %v", g, err)
	}
}

func produce(t testing.TB, brokers []string, topic string, perPartition map[int32]int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p, n := range perPartition {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestDeadPortNamesTheBroker(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := dial(t, settings(t, []string{addr}, map[string]string{KeyTimeout: "2s"}, nil))
	_, bad, err := c.Check(context.Background())
	if err == nil {
		t.Fatal("Check of a dead port succeeded")
	}
	msg := err.Error()
	if !contains(msg, addr) || !contains(msg, "connection refused") {
		t.Fatalf("error %q does not name the broker %s and the reason", msg, addr)
	}
	if contains(msg, "\n") {
		t.Fatalf("error is not one line: %q", msg)
	}
	if len(bad) != 1 || bad[0].Broker != addr {
		t.Fatalf("per-broker failures %+v", bad)
	}
}

func TestOneDeadSeedOfTwoStillConnects(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	c := dial(t, settings(t, []string{dead, cl.ListenAddrs()[0]}, nil, nil))
	ok, bad, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ok) != 1 || len(bad) != 1 || !contains(bad[0].Error(), dead) {
		t.Fatalf("ok=%v bad=%v", ok, bad)
	}
}

func TestNoBrokers(t *testing.T) {
	t.Parallel()
	s, err := Resolve(Input{}, nil, "", Source{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(s); err != ErrNoBrokers {
		t.Fatalf("got %v", err)
	}
}

func TestSASL(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			cl := newCluster(t, kfake.EnableSASL(), kfake.Superuser(mech, "ops", "s3cret-pw"))
			env := map[string]string{"GOOD": "s3cret-pw", "BAD": "wrong-pw"}
			good := dial(t, settings(t, cl.ListenAddrs(), map[string]string{KeySASLMechanism: mech, KeySASLUser: "ops", KeySASLPasswordEnv: "GOOD"}, env))
			if _, _, err := good.Check(context.Background()); err != nil {
				t.Fatalf("good password: %v", err)
			}
			if _, err := good.ListGroupsEveryBroker(context.Background()); err != nil {
				t.Fatalf("list after auth: %v", err)
			}
			bad := dial(t, settings(t, cl.ListenAddrs()[:1], map[string]string{KeySASLMechanism: mech, KeySASLUser: "ops", KeySASLPasswordEnv: "BAD", KeyTimeout: "3s"}, env))
			_, _, err := bad.Check(context.Background())
			if err == nil {
				t.Fatal("wrong password accepted")
			}
			msg := err.Error()
			if !contains(msg, "SASL authenticate failed") || !contains(msg, cl.ListenAddrs()[0]) {
				t.Fatalf("wrong-password error %q does not say SASL and the broker", msg)
			}
			if contains(msg, "wrong-pw") || contains(msg, "s3cret") {
				t.Fatalf("error leaks the password: %q", msg)
			}
			none := dial(t, settings(t, cl.ListenAddrs()[:1], map[string]string{KeyTimeout: "3s"}, nil))
			if _, _, err := none.Check(context.Background()); err == nil || !contains(err.Error(), "SASL") {
				t.Fatalf("no SASL against a SASL broker: %v", err)
			}
		})
	}
}

func TestSASLPasswordFile(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "ops", "from-file"))
	pf := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pf, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := dial(t, settings(t, cl.ListenAddrs(), map[string]string{KeySASLMechanism: "scram-sha-512", KeySASLUser: "ops", KeySASLPasswordFil: pf}, nil))
	if _, _, err := c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSASLMissingPassword(t *testing.T) {
	t.Parallel()
	s := settings(t, []string{"127.0.0.1:1"}, map[string]string{KeySASLMechanism: "PLAIN", KeySASLUser: "ops"}, nil)
	_, err := NewClient(s)
	if err == nil || !contains(err.Error(), DefaultPasswordEnv) {
		t.Fatalf("got %v", err)
	}
}

// tlsFiles writes a self-signed CA and a server cert for 127.0.0.1 signed by
// it, returning the CA path and the server's tls.Config.
func tlsFiles(t *testing.T) (caPath string, server *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaasctl test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kaas"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"kaas.test"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPath = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}, MinVersion: tls.VersionTLS12}
	return caPath, server
}

func TestTLS(t *testing.T) {
	t.Parallel()
	caPath, srv := tlsFiles(t)
	cl := newCluster(t, kfake.TLS(srv))
	addrs := cl.ListenAddrs()

	c := dial(t, settings(t, addrs, map[string]string{KeyTLSCA: caPath}, nil))
	if !c.Settings.TLS.Enabled {
		t.Fatal("--tls-ca did not enable TLS")
	}
	if _, _, err := c.Check(context.Background()); err != nil {
		t.Fatalf("TLS with the right CA: %v", err)
	}
	if _, err := c.ListGroupsEveryBroker(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Without the CA the system roots do not trust it.
	noCA := dial(t, settings(t, addrs[:1], map[string]string{KeyTLS: "true", KeyTimeout: "3s"}, nil))
	_, _, err := noCA.Check(context.Background())
	if err == nil || !contains(err.Error(), "TLS handshake failed") || !contains(err.Error(), addrs[0]) {
		t.Fatalf("untrusted cert: %v", err)
	}

	skip := dial(t, settings(t, addrs[:1], map[string]string{KeyTLSInsecure: "true"}, nil))
	if _, _, err := skip.Check(context.Background()); err != nil {
		t.Fatalf("skip-verify: %v", err)
	}

	// Server name checked against the certificate.
	wrongName := dial(t, settings(t, addrs[:1], map[string]string{KeyTLSCA: caPath, KeyTLSServerName: "other.test", KeyTimeout: "3s"}, nil))
	if _, _, err := wrongName.Check(context.Background()); err == nil || !contains(err.Error(), "TLS handshake failed") {
		t.Fatalf("wrong server name: %v", err)
	}
	rightName := dial(t, settings(t, addrs[:1], map[string]string{KeyTLSCA: caPath, KeyTLSServerName: "kaas.test"}, nil))
	if _, _, err := rightName.Check(context.Background()); err != nil {
		t.Fatalf("right server name: %v", err)
	}

	// Plaintext to a TLS listener fails clearly, not by hanging.
	plain := dial(t, settings(t, addrs[:1], map[string]string{KeyTimeout: "2s"}, nil))
	if _, _, err := plain.Check(context.Background()); err == nil || !contains(err.Error(), addrs[0]) {
		t.Fatalf("plaintext to TLS: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	caPath, srv := tlsFiles(t)
	caPEM, _ := os.ReadFile(caPath)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	srv.ClientCAs, srv.ClientAuth = pool, tls.RequireAndVerifyClientCert
	cl := newCluster(t, kfake.TLS(srv))
	addr := cl.ListenAddrs()[0]

	// The client certificate comes from a second CA the server trusts.
	dir := t.TempDir()
	cKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca2Key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca2Tmpl := &x509.Certificate{SerialNumber: big.NewInt(10), Subject: pkix.Name{CommonName: "client CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	ca2DER, _ := x509.CreateCertificate(rand.Reader, ca2Tmpl, ca2Tmpl, &ca2Key.PublicKey, ca2Key)
	ca2, _ := x509.ParseCertificate(ca2DER)
	pool.AddCert(ca2)
	cTmpl := &x509.Certificate{SerialNumber: big.NewInt(11), Subject: pkix.Name{CommonName: "ops"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	cDER, _ := x509.CreateCertificate(rand.Reader, cTmpl, ca2, &cKey.PublicKey, ca2Key)
	keyDER, _ := x509.MarshalECPrivateKey(cKey)
	certPath, keyPath := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cDER}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)

	ok := dial(t, settings(t, []string{addr}, map[string]string{KeyTLSCA: caPath, KeyTLSCert: certPath, KeyTLSKey: keyPath}, nil))
	if _, _, err := ok.Check(context.Background()); err != nil {
		t.Fatalf("mutual TLS with a client cert: %v", err)
	}
	no := dial(t, settings(t, []string{addr}, map[string]string{KeyTLSCA: caPath, KeyTimeout: "3s"}, nil))
	_, _, err := no.Check(context.Background())
	if err == nil || !contains(err.Error(), addr) || !contains(err.Error(), "TLS") {
		t.Fatalf("no client cert: %v", err)
	}
	if _, err := NewClient(settings(t, []string{addr}, map[string]string{KeyTLSCert: keyPath, KeyTLSKey: certPath}, nil)); err == nil || !contains(err.Error(), "client certificate") {
		t.Fatalf("swapped cert/key: %v", err)
	}
}

func TestTLSBadCAFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(p, []byte("not a cert"), 0o600)
	_, err := NewClient(settings(t, []string{"127.0.0.1:1"}, map[string]string{KeyTLSCA: p}, nil))
	if err == nil || !contains(err.Error(), p) || !contains(err.Error(), "no PEM") {
		t.Fatalf("got %v", err)
	}
}

func TestVersionCapApplied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cap  string
		want map[kmsg.Key]int16
	}{
		{"kaas", map[kmsg.Key]int16{kmsg.ApiVersions: 4, kmsg.ListGroups: 4, kmsg.DescribeGroups: 5, kmsg.FindCoordinator: 4, kmsg.OffsetFetch: 8, kmsg.Metadata: 10, kmsg.ListOffsets: 7}},
		{"2.4", map[kmsg.Key]int16{kmsg.ApiVersions: 3, kmsg.ListGroups: 3, kmsg.DescribeGroups: 5, kmsg.FindCoordinator: 3, kmsg.OffsetFetch: 6, kmsg.Metadata: 9, kmsg.ListOffsets: 5}},
	} {
		t.Run(tc.cap, func(t *testing.T) {
			cl := newCluster(t, kfake.SeedTopics(2, "orders"))
			adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
			commit(t, adm, "g1", "orders", map[int32]int64{0: 1, 1: 2})
			commit(t, adm, "g2", "orders", map[int32]int64{0: 3})
			vl := watchVersions(cl)
			c := dial(t, settings(t, cl.ListenAddrs(), map[string]string{KeyMaxVersions: tc.cap}, nil))
			ds, err := c.DescribeMany(context.Background(), []string{"g1", "g2"}, DescribeOptions{Known: map[string]TopicPartitions{"g1": {"orders": {0, 1}}, "g2": {"orders": {0}}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListGroupsEveryBroker(context.Background()); err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				got, n := vl.get(k)
				if n == 0 {
					t.Errorf("%s: never sent", k.Name())
					continue
				}
				if got != want {
					t.Errorf("%s: highest version sent v%d, want v%d (cap %s)", k.Name(), got, want, tc.cap)
				}
			}
			// The answers are right at either version.
			if o := ds[0].Committed.Offsets["orders"][1].Offset; o != 2 {
				t.Errorf("g1 orders/1 committed %d, want 2 (%+v)", o, ds[0].Committed)
			}
			if o := ds[1].Committed.Offsets["orders"][0].Offset; o != 3 {
				t.Errorf("g2 orders/0 committed %d, want 3", o)
			}
		})
	}
}

func mustKgo(t testing.TB, addrs []string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestListGroupsEveryBrokerKeepsAnswersApart(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(1, "t"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	groups := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, g := range groups {
		commit(t, adm, g, "t", map[int32]int64{0: 1})
	}
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	c.Counter.Reset()
	ans, err := c.ListGroupsEveryBroker(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 3 {
		t.Fatalf("%d answers, want one per broker (3)", len(ans))
	}
	by := ListedBy(ans)
	for _, g := range groups {
		want := cl.CoordinatorFor(g)
		if got := by[g]; len(got) != 1 || got[0] != want {
			t.Errorf("group %s listed by %v, want only its coordinator %d", g, got, want)
		}
	}
	if n := c.Counter.ByAPI("ListGroups"); n != 3 {
		t.Errorf("%d ListGroups requests, want 3 (one per broker)", n)
	}
	// A stale listing on a non-coordinator is visible as such: make broker
	// (coord+1)%3 also list group "a".
	co := cl.CoordinatorFor("a")
	stale := (co + 1) % 3
	cl.ControlKey(int16(kmsg.ListGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if cl.CurrentNode() != stale {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		g := kmsg.NewListGroupsResponseGroup()
		g.Group, g.ProtocolType, g.GroupState = "a", "consumer", "Empty"
		resp.Groups = append(resp.Groups, g)
		return resp, nil, true
	})
	ans, err = c.ListGroupsEveryBroker(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := ListedBy(ans)["a"]; len(got) != 2 || !slices.Contains(got, stale) || !slices.Contains(got, co) {
		t.Fatalf("stale listing lost in the merge: %v, want %d and %d", got, co, stale)
	}
}

func TestDescribeBatchedPerCoordinator(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(4, "orders"))
	brokers := cl.ListenAddrs()
	produce(t, brokers, "orders", map[int32]int{0: 10, 1: 20, 2: 5, 3: 0})
	adm := kadm.NewClient(mustKgo(t, brokers))
	var groups []string
	for i := 0; i < 60; i++ {
		g := fmt.Sprintf("grp-%02d", i)
		groups = append(groups, g)
		commit(t, adm, g, "orders", map[int32]int64{0: 4, 1: 20})
	}
	// A live member so assignments are decoded.
	liveMember(t, cl, "orders")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups = append(groups, "live", "never-existed")

	c := dial(t, settings(t, brokers, nil, nil))
	if _, err := c.Brokers(ctx); err != nil {
		t.Fatal(err)
	}
	c.Counter.Reset()
	ds, err := c.DescribeMany(ctx, groups, DescribeOptions{Known: map[string]TopicPartitions{"grp-00": {"orders": {0, 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(groups) {
		t.Fatalf("%d descriptions for %d groups", len(ds), len(groups))
	}
	// Counted on kaasctl's own client: the live consumer's requests (its
	// ListOffsets while it starts fetching) reach the same cluster.
	if n := sentByAPI(c, "DescribeGroups"); n > 3 {
		t.Errorf("%d DescribeGroups requests for %d groups, want at most one per coordinator (3)", n, len(groups))
	}
	if n := sentByAPI(c, "OffsetFetch"); n > 3 {
		t.Errorf("%d OffsetFetch requests, want at most one per coordinator (3)", n)
	}
	if n := sentByAPI(c, "FindCoordinator"); n != 1 {
		t.Errorf("%d FindCoordinator requests, want 1 batched", n)
	}
	if n := sentByAPI(c, "ListOffsets"); n > 6 {
		t.Errorf("%d ListOffsets requests, want at most 2 per leader", n)
	}
	perBroker := c.Counter.Snapshot()
	for _, b := range perBroker {
		if b.ByAPI["DescribeGroups"] > 1 {
			t.Errorf("broker %d got %d DescribeGroups requests", b.Node, b.ByAPI["DescribeGroups"])
		}
	}
	byName := map[string]GroupDescription{}
	for _, d := range ds {
		byName[d.Group] = d
		if d.Coordinator != cl.CoordinatorFor(d.Group) {
			t.Errorf("%s: coordinator %d, kfake says %d", d.Group, d.Coordinator, cl.CoordinatorFor(d.Group))
		}
	}
	g0 := byName["grp-00"]
	if g0.State != "Empty" || len(g0.Members) != 0 {
		t.Errorf("grp-00: state %q members %d", g0.State, len(g0.Members))
	}
	// p0: committed 4 of a log ending at 10; p1: 20 of 20; p2 and p3,
	// of the topic it commits to, with nothing committed.
	if want := []PartitionOffsets{{Topic: "orders", Partition: 0, Committed: 4, Start: 0, End: 10}, {Topic: "orders", Partition: 1, Committed: 20, Start: 0, End: 20},
		{Topic: "orders", Partition: 2, Committed: -1, Start: 0, End: 5}, {Topic: "orders", Partition: 3, Committed: -1, Start: 0, End: 0}}; !slices.Equal(g0.Partitions, want) {
		t.Errorf("grp-00 partitions %+v, want %+v", g0.Partitions, want)
	}
	live := byName["live"]
	if live.State != "Stable" || len(live.Members) != 1 {
		t.Fatalf("live: %+v", live.DescribedGroup)
	}
	m := live.Members[0]
	if !m.AssignmentReported || len(m.Assignment) != 1 || m.Assignment[0].Topic != "orders" || len(m.Assignment[0].Partitions) != 4 {
		t.Errorf("live member assignment not decoded: %+v", m)
	}
	if len(m.Subscription) != 1 || m.Subscription[0] != "orders" {
		t.Errorf("subscription not decoded: %+v", m.Subscription)
	}
	// The live group has no commits: its partitions have no committed
	// offset, and each names the member assigned it.
	if len(live.Partitions) != 4 {
		t.Errorf("live partitions: %+v", live.Partitions)
	}
	for _, po := range live.Partitions {
		if po.Committed != -1 || po.End < 0 || po.Member != m.MemberID {
			t.Errorf("live partition: %+v", po)
		}
	}
	ne := byName["never-existed"]
	if ne.Err == "" && ne.State != "Dead" {
		t.Errorf("never-existed: %+v", ne.DescribedGroup)
	}
}

func TestFindCoordinatorsGroupsAndTxn(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	keys := []string{"k1", "k2", "k3", "k4", "k5", "k1"}
	vl := watchVersions(cl)
	for _, txn := range []bool{false, true} {
		got, err := c.FindCoordinators(context.Background(), keys, txn)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("%d answers for 5 distinct keys", len(got))
		}
		for k, co := range got {
			if co.Err != "" || co.NodeID != cl.CoordinatorFor(k) || co.Host == "" {
				t.Errorf("txn=%v %s: %+v, kfake says %d", txn, k, co, cl.CoordinatorFor(k))
			}
		}
	}
	if v, n := vl.get(kmsg.FindCoordinator); n != 2 || v != 4 {
		t.Errorf("%d FindCoordinator requests at v%d; want 2 batched v4 requests", n, v)
	}
}

func TestFetchCommittedExplicitPartitions(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(3, "orders"), kfake.SeedTopics(1, "audit"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	commit(t, adm, "g", "orders", map[int32]int64{0: 7, 2: 9})
	commit(t, adm, "g", "audit", map[int32]int64{0: 1})
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	ctx := context.Background()
	co, err := c.FindCoordinators(ctx, []string{"g"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sawTopics [][]string
	var mu sync.Mutex
	cl.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.OffsetFetchRequest)
		mu.Lock()
		defer mu.Unlock()
		for _, g := range r.Groups {
			var ts []string
			for _, t := range g.Topics {
				ts = append(ts, fmt.Sprintf("%s%v", t.Topic, t.Partitions))
			}
			sawTopics = append(sawTopics, ts)
		}
		if r.Topics != nil {
			sawTopics = append(sawTopics, []string{"top-level"})
		}
		return nil, nil, false
	})
	got := c.FetchCommitted(ctx, map[string]TopicPartitions{"g": {"orders": {0, 1, 2}}}, co)
	g := got["g"]
	if g.Err != "" {
		t.Fatal(g.Err)
	}
	if g.Offsets["orders"][0].Offset != 7 || g.Offsets["orders"][2].Offset != 9 || g.Offsets["orders"][1].Offset != -1 {
		t.Errorf("offsets %+v", g.Offsets)
	}
	if _, ok := g.Offsets["audit"]; ok {
		t.Errorf("asked only for orders but got audit: %+v", g.Offsets)
	}
	if len(sawTopics) != 1 || len(sawTopics[0]) != 1 || sawTopics[0][0] != "orders[0 1 2]" {
		t.Errorf("request was not explicit-partition: %v", sawTopics)
	}
}

func TestFetchCommittedPerGroupBelowV8(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(1, "t"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	want := map[string]TopicPartitions{}
	var groups []string
	for i := 0; i < 12; i++ {
		g := fmt.Sprintf("old-%d", i)
		commit(t, adm, g, "t", map[int32]int64{0: int64(i)})
		want[g] = TopicPartitions{"t": {0}}
		groups = append(groups, g)
	}
	c := dial(t, settings(t, cl.ListenAddrs(), map[string]string{KeyMaxVersions: "2.4"}, nil))
	ctx := context.Background()
	co, err := c.FindCoordinators(ctx, groups, false)
	if err != nil {
		t.Fatal(err)
	}
	vl := watchVersions(cl)
	got := c.FetchCommitted(ctx, want, co)
	for i, g := range groups {
		if o := got[g].Offsets["t"][0].Offset; o != int64(i) {
			t.Errorf("%s: %d, want %d (%+v)", g, o, i, got[g])
		}
	}
	if v, n := vl.get(kmsg.OffsetFetch); n != 12 || v >= 8 {
		t.Errorf("OffsetFetch: %d requests at up to v%d; want 12 single-group requests below v8", n, v)
	}
}

func TestListLogOffsetsUnion(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(3, "a"), kfake.SeedTopics(2, "b"))
	produce(t, cl.ListenAddrs(), "a", map[int32]int{0: 3, 1: 5, 2: 0})
	produce(t, cl.ListenAddrs(), "b", map[int32]int{1: 2})
	if err := cl.DeleteRecords("a", 1, 2); err != nil {
		t.Fatal(err)
	}
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	vl := watchVersions(cl)
	got, err := c.ListLogOffsets(context.Background(), TopicPartitions{"a": nil, "b": {1, 7}, "nope": {0}})
	if err != nil {
		t.Fatal(err)
	}
	if lo := got["a"][1]; lo.Start != 2 || lo.End != 5 || lo.Err != "" {
		t.Errorf("a/1 = %+v, want start 2 end 5", lo)
	}
	if lo := got["a"][0]; lo.End != 3 {
		t.Errorf("a/0 = %+v", lo)
	}
	if len(got["a"]) != 3 {
		t.Errorf("nil partitions must mean all: %v", got["a"])
	}
	if lo := got["b"][1]; lo.End != 2 {
		t.Errorf("b/1 = %+v", lo)
	}
	if lo := got["b"][7]; lo.Err == "" {
		t.Errorf("b/7 (no such partition) has no error: %+v", lo)
	}
	if lo := got["nope"][0]; lo.Err == "" {
		t.Errorf("unknown topic has no error: %+v", lo)
	}
	leaders := map[int32]bool{}
	for _, ps := range got {
		for _, lo := range ps {
			if lo.Leader >= 0 {
				leaders[lo.Leader] = true
			}
		}
	}
	if _, n := vl.get(kmsg.ListOffsets); n != 2*len(leaders) {
		t.Errorf("%d ListOffsets requests, want 2 per leader (%d leaders)", n, len(leaders))
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestSilentBrokerTimesOut(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // accept, never answer
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
	c := dial(t, settings(t, []string{ln.Addr().String()}, map[string]string{KeyTimeout: "300ms"}, nil))
	_, _, err = c.Check(context.Background())
	if err == nil || !contains(err.Error(), "timeout") || !contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("silent broker: %v", err)
	}
}

func TestMaxBatchSplitsPerCoordinator(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(1, "t"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	var groups []string
	perCoord := map[int32]int{}
	for i := 0; i < 30; i++ {
		g := fmt.Sprintf("mb-%d", i)
		groups = append(groups, g)
		commit(t, adm, g, "t", map[int32]int64{0: 1})
		perCoord[cl.CoordinatorFor(g)]++
	}
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	c.MaxBatch = 4
	vl := watchVersions(cl)
	ds, err := c.DescribeMany(context.Background(), groups, DescribeOptions{Known: map[string]TopicPartitions{}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, n := range perCoord {
		want += (n + 3) / 4
	}
	if _, n := vl.get(kmsg.DescribeGroups); n != want {
		t.Errorf("%d DescribeGroups requests, want %d (batches of 4 per coordinator)", n, want)
	}
	for _, d := range ds {
		if d.Err != "" || d.State != "Empty" {
			t.Errorf("%s: %+v", d.Group, d.DescribedGroup)
		}
	}
}

// kaas leaves client_host and member metadata empty and may send empty
// assignment bytes: kaasctl says so instead of showing nothing.
func TestDescribeKaasEmptyMemberFields(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	cl.ControlKey(int16(kmsg.DescribeGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		r := req.(*kmsg.DescribeGroupsRequest)
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.State, rg.ProtocolType, rg.Protocol = g, "Stable", "consumer", "range"
			m := kmsg.NewDescribeGroupsResponseGroupMember()
			m.MemberID, m.ClientID = "m-1", "app"
			rg.Members = append(rg.Members, m)
			bad := kmsg.NewDescribeGroupsResponseGroupMember()
			bad.MemberID, bad.ClientHost, bad.MemberAssignment = "m-2", "/10.0.0.9", []byte{0, 1, 0}
			rg.Members = append(rg.Members, bad)
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	})
	c := dial(t, settings(t, cl.ListenAddrs(), nil, nil))
	ctx := context.Background()
	co, err := c.FindCoordinators(ctx, []string{"g"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ds := c.DescribeGroups(ctx, []string{"g"}, co)
	if len(ds) != 1 || len(ds[0].Members) != 2 {
		t.Fatalf("%+v", ds)
	}
	m := ds[0].Members[0]
	if m.Host() != NotReported || m.SubscriptionText() != NotReported || m.AssignmentText() != NotReported {
		t.Errorf("empty fields: host %q subscription %q assignment %q", m.Host(), m.SubscriptionText(), m.AssignmentText())
	}
	if m.Subscription == nil || m.Assignment == nil {
		t.Error("nil slices would print as null")
	}
	b := ds[0].Members[1]
	if b.Host() != "/10.0.0.9" || !contains(b.AssignmentText(), "undecodable") {
		t.Errorf("garbage assignment: %q %q", b.Host(), b.AssignmentText())
	}
}

// One coordinator failing spoils only its own groups, and says which broker.
func TestDescribePartialFailureNamesBroker(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, kfake.SeedTopics(1, "t"))
	adm := kadm.NewClient(mustKgo(t, cl.ListenAddrs()))
	var groups []string
	for i := 0; i < 12; i++ {
		g := fmt.Sprintf("pf-%d", i)
		groups = append(groups, g)
		commit(t, adm, g, "t", map[int32]int64{0: 1})
	}
	broken := cl.CoordinatorFor(groups[0])
	cl.ControlKey(int16(kmsg.DescribeGroups), func(kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if cl.CurrentNode() != broken {
			return nil, nil, false
		}
		return nil, fmt.Errorf("drop"), true // closes the connection
	})
	c := dial(t, settings(t, cl.ListenAddrs(), map[string]string{KeyTimeout: "3s"}, nil))
	ds, err := c.DescribeMany(context.Background(), groups, DescribeOptions{Known: map[string]TopicPartitions{}})
	if err != nil {
		t.Fatal(err)
	}
	okN, badN := 0, 0
	for _, d := range ds {
		if cl.CoordinatorFor(d.Group) == broken {
			badN++
			if d.Err == "" || !contains(d.Err, fmt.Sprintf("node %d", broken)) {
				t.Errorf("%s on the broken coordinator: err %q", d.Group, d.Err)
			}
		} else {
			okN++
			if d.Err != "" || d.State != "Empty" {
				t.Errorf("%s on a healthy coordinator: %+v", d.Group, d.DescribedGroup)
			}
		}
	}
	if okN == 0 || badN == 0 {
		t.Fatalf("test needs groups on both sides: ok %d bad %d", okN, badN)
	}
}

// liveMember joins group "live" on topic with one consumer (closed when
// the test ends) and waits until the group is Stable.
func liveMember(t *testing.T, cl *kfake.Cluster, topic string) {
	t.Helper()
	cons, err := kgo.NewClient(kgo.SeedBrokers(cl.ListenAddrs()...), kgo.ConsumerGroup("live"), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.WaitGroupStable(ctx, "live", 1); err != nil {
		t.Fatal(err)
	}
}

// ListedBy maps each group to the nodes that listed it.
func ListedBy(answers []BrokerGroups) map[string][]int32 {
	m := map[string][]int32{}
	for _, a := range answers {
		for _, g := range a.Groups {
			m[g.Group] = append(m[g.Group], a.Broker.NodeID)
		}
	}
	for k := range m {
		slices.Sort(m[k])
	}
	return m
}
