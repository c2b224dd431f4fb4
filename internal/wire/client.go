package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ErrNoBrokers means no source named a broker.
var ErrNoBrokers = errors.New("no brokers given: pass --brokers or set KAASCTL_BROKERS or a profile")

// DefaultConcurrency bounds the requests in flight at once.
const DefaultConcurrency = 16

// Client is a connected kaasctl client: a kgo client with kaasctl's
// settings, its kadm companion, and a per-broker request counter.
type Client struct {
	KGO      *kgo.Client
	Adm      *kadm.Client
	Settings *Settings
	Versions *kversion.Versions
	Counter  *Counter
	// Concurrency bounds the requests kaasctl issues at once.
	Concurrency int
	// MaxBatch caps the groups in one DescribeGroups or OffsetFetch
	// request (0: all of a coordinator's groups in one request).
	MaxBatch int

	stages   *stageTracker
	mu       sync.Mutex
	brokerV  map[int32]*kversion.Versions
	addrs    map[int32]string
	seedAddr []string
	// answered are the seeds that answered an any-broker request, in the
	// order they first did.
	answered []string
	// kopts are the options the kgo client was built with (ReachAddr
	// builds a one-address client from them).
	kopts []kgo.Opt
}

// Answered lists the seed addresses that answered a request any broker can
// answer (FindCoordinator, metadata) so far: what a command may say it
// asked, unlike Settings.Brokers, which holds the silent ones too.
func (c *Client) Answered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.answered)
}

func (c *Client) noteAnswered(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.answered, addr) {
		c.answered = append(c.answered, addr)
	}
}

// Option adjusts a client before it is built.
type Option func(*[]kgo.Opt)

// WithKgoOpts passes extra kgo options (tests).
func WithKgoOpts(o ...kgo.Opt) Option { return func(opts *[]kgo.Opt) { *opts = append(*opts, o...) } }

// maxRequestOverhead is the largest request timeout overhead kgo accepts.
const maxRequestOverhead = 15 * time.Minute

// NewClient builds a client from resolved settings. It does not touch the
// network; Check does.
func NewClient(s *Settings, opts ...Option) (*Client, error) {
	if len(s.Brokers) == 0 {
		return nil, ErrNoBrokers
	}
	vers, err := ParseMaxVersions(s.MaxVersions)
	if err != nil {
		return nil, fmt.Errorf("max-versions: %v", err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{Settings: s, Versions: vers, Counter: NewCounter(), Concurrency: DefaultConcurrency,
		brokerV: map[int32]*kversion.Versions{}, addrs: map[int32]string{}, seedAddr: slices.Clone(s.Brokers),
		stages: newStageTracker(s.TLS.Enabled)}
	kopts := []kgo.Opt{
		kgo.SeedBrokers(s.Brokers...),
		kgo.ClientID("kaasctl"),
		kgo.SoftwareNameAndVersion("kaasctl", softwareVersion(s.SoftwareVersion)),
		kgo.MaxVersions(vers),
		kgo.DialTimeout(timeout),
		// kgo refuses an overhead above 15 minutes; a longer --timeout
		// still bounds every call through WithTimeout.
		kgo.RequestTimeoutOverhead(min(timeout, maxRequestOverhead)),
		kgo.RetryTimeout(timeout),
		kgo.RequestRetries(2),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(time.Second),
		kgo.WithHooks(c.Counter, c.stages),
	}
	var tc *tls.Config
	if s.TLS.Enabled {
		var err error
		if tc, err = buildTLS(s.TLS); err != nil {
			return nil, err
		}
	}
	kopts = append(kopts, kgo.Dialer(c.stages.dialer(timeout, tc)))
	if s.SASL.Mechanism != "" {
		m, err := buildSASL(s)
		if err != nil {
			return nil, err
		}
		kopts = append(kopts, kgo.SASL(m))
	}
	for _, o := range opts {
		o(&kopts)
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("building the client: %v", err)
	}
	c.KGO, c.kopts = cl, kopts
	c.Adm = kadm.NewClient(cl)
	return c, nil
}

// Close releases the connections.
func (c *Client) Close() {
	if c != nil && c.KGO != nil {
		c.KGO.Close()
	}
}

// Timeout is the per-call timeout.
func (c *Client) Timeout() time.Duration {
	if c.Settings.Timeout > 0 {
		return c.Settings.Timeout
	}
	return DefaultTimeout
}

// WithTimeout derives the context of one call.
func (c *Client) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.Timeout())
}

// maxPEMBytes bounds a CA bundle, certificate or key file (a system CA
// bundle is a few hundred KiB).
const maxPEMBytes = 16 << 20

func buildTLS(t TLSSettings) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := readUserFile("TLS CA file", t.CAFile, maxPEMBytes)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificate in it", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		certPEM, err := readUserFile("TLS client certificate", t.CertFile, maxPEMBytes)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readUserFile("TLS client key", t.KeyFile, maxPEMBytes)
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s / key %s: %v", t.CertFile, t.KeyFile, unwrapPathErr(err))
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func buildSASL(s *Settings) (sasl.Mechanism, error) {
	pass, err := s.Password()
	if err != nil {
		return nil, err
	}
	switch s.SASL.Mechanism {
	case "PLAIN":
		return plain.Auth{User: s.SASL.User, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.SASL.User, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: s.SASL.User, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("unknown SASL mechanism %q", s.SASL.Mechanism)
}

// BrokerError is one broker that could not be used: the stage that failed
// first, the reason and likely fix in one line, and the error underneath
// (the broker's own message kept whole).
type BrokerError struct {
	Broker string // host:port, or "node N (host:port)"
	Stage  Stage  // dial, TLS handshake, ApiVersions, SASL handshake, SASL authenticate, request
	Reason string // connection refused, the broker's certificate is not trusted, ...
	Fix    string // what to change, or ""
	Err    error
	// Silent: the broker accepted the connection (the dial succeeded) and
	// then did not answer within the timeout (hung, overloaded, or a TLS
	// port waiting for a handshake), as opposed to one that cannot be
	// reached at all.
	Silent bool
}

// cause is the stage, reason and detail without the broker.
func (e *BrokerError) cause() string {
	d := ""
	if e.Err != nil {
		d = oneLine(e.Err.Error())
	}
	var parts []string
	if e.Stage != "" {
		parts = append(parts, string(e.Stage)+" failed")
	}
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	if d != "" && !strings.EqualFold(d, e.Reason) {
		parts = append(parts, d)
	}
	s := strings.Join(parts, ": ")
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

func (e *BrokerError) Error() string { return fmt.Sprintf("broker %s: %s", e.Broker, e.cause()) }

func (e *BrokerError) Unwrap() error { return e.Err }

// ConnectError is every seed failing.
type ConnectError struct{ Brokers []*BrokerError }

func (e *ConnectError) Error() string {
	if len(e.Brokers) == 1 {
		return "cannot reach kaas: " + e.Brokers[0].Error()
	}
	// Every broker failing the same way is one cause, said once.
	same := true
	for _, b := range e.Brokers[1:] {
		if b.cause() != e.Brokers[0].cause() {
			same = false
			break
		}
	}
	names := make([]string, len(e.Brokers))
	parts := make([]string, len(e.Brokers))
	for i, b := range e.Brokers {
		names[i] = b.Broker
		parts[i] = b.Error()
	}
	if same {
		return fmt.Sprintf("cannot reach any of %d brokers (%s): %s", len(e.Brokers), strings.Join(names, ", "), e.Brokers[0].cause())
	}
	return fmt.Sprintf("cannot reach any of %d brokers: %s", len(e.Brokers), strings.Join(parts, " | "))
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// softwareVersion is a Settings.SoftwareVersion reduced to what ApiVersions
// v3+ accepts ([a-zA-Z0-9.-], starting and ending alphanumeric); "dev" when
// nothing is left.
func softwareVersion(v string) string {
	b := []byte(v)
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == '.' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			out = append(out, c)
		}
	}
	s := strings.Trim(string(out), ".-")
	if s == "" || len(s) > 64 {
		return "dev"
	}
	return s
}

// classify explains a failure of the broker named broker with this
// client's settings and how far that broker's connection got.
func (c *Client) classify(broker string, err error) *BrokerError {
	return ClassifyConn(broker, err, c.connInfo(c.stages.named(broker)))
}

func (c *Client) connInfo(st Stage) ConnInfo {
	ci := ConnInfo{Timeout: c.Timeout(), TLS: c.Settings.TLS.Enabled, Mechanism: c.Settings.SASL.Mechanism, Stage: st}
	if src := c.Settings.Sources[KeySASLPasswordEnv]; src.Kind == "command-config" {
		ci.CommandConfig = src.Detail
	}
	return ci
}

// Check reaches every seed broker with a metadata request (concurrently; it
// needs a completed SASL login where ApiVersions would not)
// and returns the seeds that answered. It fails only when none answered,
// with every seed's reason.
func (c *Client) Check(ctx context.Context) ([]string, []*BrokerError, error) {
	seeds := c.KGO.SeedBrokers()
	type res struct {
		addr string
		err  *BrokerError
	}
	out := make([]res, len(seeds))
	var wg sync.WaitGroup
	for i, b := range seeds {
		addr := c.seedAddr[min(i, len(c.seedAddr)-1)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := c.WithTimeout(ctx)
			defer cancel()
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{}
			_, err := b.Request(cctx, req)
			out[i].addr = addr
			if err != nil {
				out[i].err = ClassifyConn(addr, err, c.connInfo(c.stages.seed(int32(math.MinInt32+i), addr)))
			}
		}()
	}
	wg.Wait()
	var ok []string
	var bad []*BrokerError
	for _, r := range out {
		if r.err != nil {
			bad = append(bad, r.err)
		} else {
			ok = append(ok, r.addr)
			c.noteAnswered(r.addr)
		}
	}
	if len(ok) == 0 {
		return nil, bad, &ConnectError{Brokers: bad}
	}
	if len(bad) > 0 {
		// From now on only the seeds that answered are asked "any broker"
		// questions (metadata, FindCoordinator), by kaasctl and by kgo's
		// own broker discovery: a seed that accepts connections and never
		// answers would otherwise cost a whole deadline per question.
		if err := c.KGO.UpdateSeedBrokers(ok...); err == nil {
			c.mu.Lock()
			c.seedAddr = slices.Clone(ok)
			c.mu.Unlock()
		}
	}
	return ok, bad, nil
}

// ReachAddr asks the broker at addr for metadata on a connection of its
// own (the client's settings: TLS, SASL, version cap, deadlines), under the
// per-call timeout, and returns nil when it answers: how a --brokers
// address that no broker's metadata advertises (a broker that is down,
// which kaas drops from its metadata and brokers[]) is told apart.
func (c *Client) ReachAddr(ctx context.Context, addr string) error {
	cl, err := kgo.NewClient(append(slices.Clone(c.kopts), kgo.SeedBrokers(addr))...)
	if err != nil {
		return ClassifyConn(addr, err, c.connInfo(""))
	}
	defer cl.Close()
	cctx, cancel := c.WithTimeout(ctx)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	if _, err := cl.SeedBrokers()[0].Request(cctx, req); err != nil {
		return ClassifyConn(addr, err, c.connInfo(c.stages.seed(math.MinInt32, addr)))
	}
	return nil
}

// anyRequest sends a request any broker can answer (metadata,
// FindCoordinator) to the seeds in turn, each under its own deadline,
// and returns the first answer; a seed that fails or stays silent only
// moves the question to the next. The error names every seed's failure.
func (c *Client) anyRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	seeds := c.KGO.SeedBrokers()
	c.mu.Lock()
	addrs := slices.Clone(c.seedAddr)
	c.mu.Unlock()
	var errs []*BrokerError
	for i, b := range seeds {
		addr := addrs[min(i, len(addrs)-1)]
		cctx, cancel := c.WithTimeout(ctx)
		resp, err := b.Request(cctx, req)
		cancel()
		if err == nil {
			c.noteAnswered(addr)
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, c.classify(addr, err)
		}
		errs = append(errs, c.classify(addr, err))
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, &ConnectError{Brokers: errs}
}

// Counter counts the requests written to each broker, by API. It is a kgo
// hook, so it sees every request the client sends, including ApiVersions,
// SASL and metadata refreshes.
type Counter struct {
	mu sync.Mutex
	m  map[int32]*BrokerCount
}

// BrokerCount is the requests one broker received.
type BrokerCount struct {
	Node     int32            `json:"node"`
	Addr     string           `json:"addr"`
	Seed     bool             `json:"seed,omitempty"`
	Requests int64            `json:"requests"`
	ByAPI    map[string]int64 `json:"byApi"`
}

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{m: map[int32]*BrokerCount{}} }

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (c *Counter) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	bc := c.m[meta.NodeID]
	if bc == nil {
		bc = &BrokerCount{Node: meta.NodeID, Addr: net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), ByAPI: map[string]int64{}}
		bc.Seed = meta.NodeID < math.MinInt32+1<<16
		c.m[meta.NodeID] = bc
	}
	bc.Requests++
	bc.ByAPI[kmsg.NameForKey(key)]++
}

// Snapshot returns the counts, brokers by node id (seed connections last).
func (c *Counter) Snapshot() []BrokerCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]BrokerCount, 0, len(c.m))
	for _, bc := range c.m {
		cp := *bc
		cp.ByAPI = map[string]int64{}
		for k, v := range bc.ByAPI {
			cp.ByAPI[k] = v
		}
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b BrokerCount) int {
		if a.Seed != b.Seed {
			if a.Seed {
				return 1
			}
			return -1
		}
		return int(a.Node) - int(b.Node)
	})
	return out
}

// Total is the number of requests sent so far.
func (c *Counter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, bc := range c.m {
		n += bc.Requests
	}
	return n
}

// ByAPI sums the requests of one API over all brokers.
func (c *Counter) ByAPI(api string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, bc := range c.m {
		n += bc.ByAPI[api]
	}
	return n
}

// Reset forgets the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.m = map[int32]*BrokerCount{}
	c.mu.Unlock()
}
