package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stage is how far a connection to a broker got when it failed. The stages
// happen in this order on every new connection: dial (TCP), TLS handshake
// (with --tls), ApiVersions, SASL handshake and SASL authenticate (with
// --sasl-mechanism), then the request itself. A failure is explained by the
// first stage that failed, never by a later one: a TLS mismatch is not a
// wrong password.
type Stage string

// The stages of a connection, in order.
const (
	StageDial          Stage = "dial"
	StageTLS           Stage = "TLS handshake"
	StageAPIVersions   Stage = "ApiVersions"
	StageSASLHandshake Stage = "SASL handshake"
	StageSASLAuth      Stage = "SASL authenticate"
	StageRequest       Stage = "request"
)

// Fixes shared by several classifications (kaas generation: the Go broker;
// the lab facts in the project's research notes, "Authentication").
const (
	fixSCRAM        = "kaas supports SCRAM-SHA-512: --sasl-mechanism SCRAM-SHA-512 --sasl-user USER and the password in --sasl-password-env or --sasl-password-file"
	fixPLAIN        = "kaas takes PLAIN only with a Kubernetes service-account token as the password, over TLS (in a pod: --sasl-password-file /var/run/secrets/kubernetes.io/serviceaccount/token); elsewhere use --sasl-mechanism SCRAM-SHA-512"
	fixPassword     = "check --sasl-user and the password (--sasl-password-env/--sasl-password-file); kaas keeps its users in __cluster/credentials.json"
	fixNeedsSASL    = "this listener probably requires SASL: " + fixSCRAM
	fixNeedsTLS     = "this is probably a TLS listener: add --tls (and --tls-ca CA.pem), or use the broker's plaintext port"
	fixNotTLS       = "this is probably a plaintext listener: drop --tls and the --tls-* flags, or use the broker's TLS port"
	fixReachability = "check the address in --brokers and that the broker is running"
)

// stageTracker is a kgo hook that remembers, per broker, the last stage a
// connection reached: the connect hook (dial and, with TLS, the handshake),
// then the key of every request written or read (ApiVersions 18,
// SaslHandshake 17, SaslAuthenticate 36, anything else: the request).
type stageTracker struct {
	tls    bool
	mu     sync.Mutex
	seq    uint64
	byNode map[int32]stageMark
	byAddr map[string]stageMark
}

type stageMark struct {
	stage Stage
	seq   uint64
	// redialFrom is set while a redial is in flight (stage is StageDial):
	// the stage the connection before it had reached. kgo redials when a
	// request's first connection met silence; the request's deadline then
	// ends while the redial is under way, and its failure is that silence.
	redialFrom Stage
}

// effective is the stage a mark stands for in a report.
func (m stageMark) effective() Stage {
	if m.stage == StageDial && m.redialFrom != "" {
		return m.redialFrom
	}
	return m.stage
}

func newStageTracker(tlsOn bool) *stageTracker {
	return &stageTracker{tls: tlsOn, byNode: map[int32]stageMark{}, byAddr: map[string]stageMark{}}
}

func (t *stageTracker) mark(meta kgo.BrokerMetadata, st Stage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	m := stageMark{stage: st, seq: t.seq}
	t.byNode[meta.NodeID] = m
	t.byAddr[net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))] = m
}

// OnBrokerConnect implements kgo.HookBrokerConnect. kgo calls it once the
// connection is initialised (after ApiVersions and SASL), with conn nil when
// the dial or the TLS handshake failed; a later failure was already marked by
// the request hooks.
//
// kgo also reports here a connection whose first request (ApiVersions)
// failed: when the dialer already recorded that this connection got past
// the dial (and the TLS handshake), that later stage is kept, so a broker
// that accepts and never answers is not called a dial failure.
func (t *stageTracker) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, conn net.Conn, err error) {
	switch {
	case conn != nil || err == nil:
	case isTCPDialErr(err) && t.addrStage(meta) != StageDial:
		// A redial cut short by the request's deadline: the dialer kept
		// the stage the earlier attempt reached (see dialer).
	case !isTCPDialErr(err) && t.addrStage(meta) == StageAPIVersions:
		t.mark(meta, StageAPIVersions)
	case t.tls && !isTCPDialErr(err):
		t.mark(meta, StageTLS)
	default:
		t.mark(meta, StageDial)
	}
}

// addrStage is the last stage the dialer recorded for meta's address.
func (t *stageTracker) addrStage(meta kgo.BrokerMetadata) Stage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byAddr[net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))].effective()
}

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (t *stageTracker) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	t.mark(meta, stageForKey(key))
}

// OnBrokerRead implements kgo.HookBrokerRead.
func (t *stageTracker) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	t.mark(meta, stageForKey(key))
}

func stageForKey(key int16) Stage {
	switch key {
	case 18:
		return StageAPIVersions
	case 17:
		return StageSASLHandshake
	case 36:
		return StageSASLAuth
	}
	return StageRequest
}

// addrMark is the last mark of addr.
func (t *stageTracker) addrMark(addr string) stageMark {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byAddr[addr]
}

// markRedial marks addr as being dialled, remembering how far the
// previous connection got (prev) when it got past the dial.
func (t *stageTracker) markRedial(addr string, prev stageMark) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	m := stageMark{stage: StageDial, seq: t.seq}
	if st := prev.effective(); st != "" && st != StageDial {
		m.redialFrom = st
	}
	t.byAddr[addr] = m
}

// restoreAddr marks addr with st again (newest), undoing a dial mark.
func (t *stageTracker) restoreAddr(addr string, st Stage) { t.markAddr(addr, st) }

// markAddr records a stage of a connection being dialled to addr.
func (t *stageTracker) markAddr(addr string, st Stage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	t.byAddr[addr] = stageMark{stage: st, seq: t.seq}
}

// dialer is kgo's dial function (TCP, then the TLS handshake when tc is
// set, as kgo's own TLS dialer does) marking each step, so a dial or a
// handshake that is still hanging when the request's deadline passes is
// known for what it is.
func (t *stageTracker) dialer(timeout time.Duration, tc *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: timeout}
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		// kgo redials after a connection whose first request got no
		// answer, with what is left of the request's deadline: nearly
		// nothing. Such a redial fails at once, and the failure to report
		// is the silence the earlier connection met, not this dial. A dial
		// that starts with time left is a dial like any other.
		prev := t.addrMark(host)
		dl, hasDL := ctx.Deadline()
		tail := ctx.Err() != nil || (hasDL && time.Until(dl) < timeout/10)
		if tail {
			t.markRedial(host, prev)
		} else {
			t.markAddr(host, StageDial)
		}
		conn, err := nd.DialContext(ctx, network, host)
		if err != nil {
			if tail && prev.effective() != "" && prev.effective() != StageDial {
				t.restoreAddr(host, prev.effective())
			} else {
				t.markAddr(host, StageDial)
			}
			return nil, err
		}
		if tc == nil {
			t.markAddr(host, StageAPIVersions)
			return conn, nil
		}
		t.markAddr(host, StageTLS)
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			server, _, err := net.SplitHostPort(host)
			if err != nil {
				conn.Close()
				return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
			}
			cfg.ServerName = server
		}
		hctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		tconn := tls.Client(conn, cfg)
		if err := tconn.HandshakeContext(hctx); err != nil {
			conn.Close()
			return nil, err
		}
		t.markAddr(host, StageAPIVersions)
		return tconn, nil
	}
}

// seed is the last stage of seed broker id, given as addr (kgo adds the
// default port 9092 when the seed has none).
func (t *stageTracker) seed(id int32, addr string) Stage {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	best := t.byNode[id]
	keys := []string{addr}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		keys = append(keys, net.JoinHostPort(strings.Trim(addr, "[]"), "9092"))
	}
	for _, k := range keys {
		if m, ok := t.byAddr[k]; ok && m.seq > best.seq {
			best = m
		}
	}
	return best.effective()
}

// named is the last stage of the broker a name refers to: "host:port",
// "node N (host:port)", "node N", or a comma-separated list of addresses
// (then the most recent of them, else the most recent of any broker).
func (t *stageTracker) named(name string) Stage {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rest, ok := strings.CutPrefix(name, "node "); ok {
		idText, addr, _ := strings.Cut(rest, " ")
		if m, ok := t.byAddr[strings.Trim(addr, "()")]; ok {
			return m.effective()
		}
		if id, err := strconv.ParseInt(idText, 10, 32); err == nil {
			return t.byNode[int32(id)].effective()
		}
	}
	var best stageMark
	for _, a := range strings.Split(name, ",") {
		if m, ok := t.byAddr[strings.TrimSpace(a)]; ok && m.seq > best.seq {
			best = m
		}
	}
	if best.stage == "" && strings.Contains(name, ",") {
		for _, m := range t.byAddr {
			if m.seq > best.seq {
				best = m
			}
		}
	}
	return best.effective()
}

// ConnInfo is what a classification knows about the connection besides the
// error: the per-call timeout, whether TLS and which SASL mechanism are in
// use, and the last stage the broker's connection reached ("" if unknown).
type ConnInfo struct {
	Timeout   time.Duration
	TLS       bool
	Mechanism string
	Stage     Stage
	// CommandConfig is the --command-config file the user and password
	// came from ("" when they came from flags, environment or a profile):
	// a login fix names that file.
	CommandConfig string
}

// ClassifyConn explains why a broker could not be used: the stage that failed
// first, the likely cause and fix, and the error itself (the broker's own
// message kept whole).
func ClassifyConn(broker string, err error, ci ConnInfo) *BrokerError {
	be := &BrokerError{Broker: broker, Err: err}
	if err == nil {
		be.Reason = "no error"
		return be
	}
	ce := readConnErr(err, ci)
	be.Stage = ce.stage
	if ce.firstEOF != nil {
		// franz-go's guess is replaced by the stage-aware one; keep the
		// underlying error.
		be.Err = ce.firstEOF.Unwrap()
	}
	if !ce.explainUnanswered(be) {
		ce.explainAnswer(be)
	}
	if be.Fix == fixPassword && ci.CommandConfig != "" {
		be.Fix = "check username and password in sasl.jaas.config of the --command-config file " + ci.CommandConfig + " (they are taken from there); kaas keeps its users in __cluster/credentials.json"
	}
	return be
}

// connErr is what ClassifyConn reads from an error before it words it:
// the broker's own error and message, franz-go's first-read EOF, whether
// the connection was closed or the answer malformed, and the stage that
// failed.
type connErr struct {
	err       error
	ci        ConnInfo
	saslOn    bool
	msg       string
	isKerr    bool // the broker answered with an error code, ke
	ke        *kerr.Error
	brokerMsg string
	firstEOF  *kgo.ErrFirstReadEOF
	closed    bool
	malformed bool
	stage     Stage
}

// readConnErr reads err. The stage is what the error itself proves first,
// else how far the connection got, else the request; a SASL stage without
// SASL in use is the request.
func readConnErr(err error, ci ConnInfo) *connErr {
	ce := &connErr{err: err, ci: ci, saslOn: ci.Mechanism != "", msg: err.Error()}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		ce.isKerr, ce.ke = true, ke
		ce.brokerMsg = kerrMessage(ce.msg, ke)
	}
	var firstEOF *kgo.ErrFirstReadEOF
	if errors.As(err, &firstEOF) {
		ce.firstEOF = firstEOF
	}
	st := stageFromError(err, ce.msg, ci, ce.isKerr, ce.ke, ce.brokerMsg, ce.firstEOF != nil)
	if st == "" {
		st = ci.Stage
	}
	if st == "" {
		st = StageRequest
	}
	if !ce.saslOn && (st == StageSASLHandshake || st == StageSASLAuth) {
		st = StageRequest
	}
	ce.stage = st
	ce.closed = errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE) || ce.firstEOF != nil
	ce.malformed = strings.Contains(ce.msg, "did not contain enough data to be valid") ||
		strings.Contains(ce.msg, "short response from ApiVersions") || strings.Contains(ce.msg, "unable to read ApiVersions response") ||
		strings.Contains(ce.msg, "correlation ID")
	return ce
}

// explainUnanswered words the failures that got no answer from the broker:
// an interrupted run, a closed client, a name or connection the network
// refused, a timeout (its fix by stage), TLS. It reports whether the error
// was one of them.
func (ce *connErr) explainUnanswered(be *BrokerError) bool {
	err, st := ce.err, ce.stage
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.Canceled):
		be.Reason = "interrupted"
	case errors.Is(err, kgo.ErrClientClosed):
		be.Reason = "client closed"
	case errors.As(err, &dnsErr):
		be.Stage, be.Reason, be.Fix = StageDial, "host not found", "check the host name in --brokers"
	case errors.Is(err, syscall.ECONNREFUSED):
		be.Stage, be.Reason, be.Fix = StageDial, "connection refused", fixReachability
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		be.Reason = fmt.Sprintf("no answer within %s (timeout)", ce.ci.Timeout)
		be.Err = nil
		be.Silent = st != StageDial
		be.Fix = timeoutFix(st, ce.ci.TLS)
	case st == StageTLS:
		be.Reason, be.Fix = tlsReason(err, ce.msg, ce.closed)
	case strings.Contains(ce.msg, "tls alert record"):
		be.Reason, be.Fix = "the broker answered with a TLS alert", fixNeedsTLS
	default:
		return false
	}
	return true
}

// timeoutFix is what to do about a timeout at stage st.
func timeoutFix(st Stage, tlsOn bool) string {
	switch st {
	case StageDial:
		return fixReachability + " (a firewall or a wrong host can swallow the connection)"
	case StageTLS:
		return fixNotTLS
	case StageAPIVersions:
		if !tlsOn {
			// The connection was accepted and nothing came back: a hung
			// broker, or a TLS port waiting for a handshake.
			return "the broker accepted the connection but does not answer: it may be hung or overloaded (check its logs, or raise --timeout); or " + fixNeedsTLS
		}
		return "the broker accepted TLS but does not answer: check its logs, or raise --timeout"
	case StageSASLHandshake, StageSASLAuth:
		return "the broker does not answer the login: check its logs, or raise --timeout"
	default:
		return "the broker is hung or overloaded: check its logs, or raise --timeout"
	}
}

// explainAnswer words what the broker answered, or how it hung up, at the
// stage that failed: a login refused, a connection closed, a malformed
// answer, an error code; a dial error it does not know is "cannot
// connect".
func (ce *connErr) explainAnswer(be *BrokerError) {
	st, closed, malformed, saslOn := ce.stage, ce.closed, ce.malformed, ce.saslOn
	switch {
	case ce.isKerr && saslOn && (st == StageSASLHandshake || st == StageSASLAuth):
		be.Reason, be.Fix = saslReason(st, ce.ke, ce.brokerMsg, ce.ci.Mechanism)
		be.Err = brokerSaid(ce.ke, ce.brokerMsg)
	case closed && st == StageAPIVersions:
		be.Reason = "the broker closed the connection before answering"
		if ce.ci.TLS {
			be.Fix = "the TLS handshake passed but the broker hung up: check its logs (a client certificate it does not accept?)"
		} else {
			be.Fix = fixNeedsTLS
		}
	case closed && st == StageSASLHandshake:
		be.Reason, be.Fix = "the broker closed the connection during the SASL handshake", fixSCRAM
	case closed && st == StageSASLAuth:
		be.Reason = "the broker closed the connection during login (wrong user or password?)"
		be.Fix = fixPassword
		if strings.EqualFold(ce.ci.Mechanism, "PLAIN") {
			be.Fix = fixPLAIN
		}
	case closed && st == StageRequest && !saslOn:
		be.Reason, be.Fix = "the broker closed the connection after the first request", fixNeedsSASL
	case closed:
		be.Reason = "connection closed by the broker"
		be.Fix = "the broker may be shutting down or restarting: check its logs and retry"
	case malformed && !saslOn && (st == StageAPIVersions || st == StageRequest):
		be.Reason, be.Fix = "malformed response (this listener probably requires SASL)", fixSCRAM
	case malformed:
		be.Reason = "malformed response"
		be.Fix = "the broker answered something kaasctl cannot read: is this a kaas/Kafka port? For another Kafka-compatible broker try --max-versions latest"
	case ce.isKerr && st == StageAPIVersions:
		be.Reason, be.Err = "the broker refused ApiVersions", brokerSaid(ce.ke, ce.brokerMsg)
		be.Fix = "check --max-versions (kaas: the default 'kaas')"
	case ce.isKerr:
		be.Reason, be.Err = "the broker answered with an error", brokerSaid(ce.ke, ce.brokerMsg)
	case isTCPDialErr(ce.err):
		be.Stage, be.Reason, be.Fix = StageDial, "cannot connect", fixReachability
	}
}

// stageFromError is the stage an error proves by its type or text alone.
func stageFromError(err error, msg string, ci ConnInfo, isKerr bool, ke *kerr.Error, brokerMsg string, isFirstEOF bool) Stage {
	var dnsErr *net.DNSError
	switch {
	case isTCPDialErr(err) && isTimeout(err) && ci.Stage != "" && ci.Stage != StageDial:
		// kgo's redial in the last moment of a request whose connection
		// met silence (see stageTracker.dialer): the silence is the cause.
		return ci.Stage
	case errors.As(err, &dnsErr) || errors.Is(err, syscall.ECONNREFUSED) || isTCPDialErr(err):
		return StageDial
	case isTLSErr(err, msg):
		return StageTLS
	case isFirstEOF && strings.Contains(msg, "after a dial"):
		if ci.TLS {
			return StageTLS
		}
		return StageDial
	case isFirstEOF && strings.Contains(msg, "api versions"):
		return StageAPIVersions
	case isFirstEOF:
		return StageRequest
	case strings.Contains(msg, "ApiVersions"):
		return StageAPIVersions
	case isKerr && (ke.Code == kerr.SaslAuthenticationFailed.Code || strings.HasPrefix(brokerMsg, "scram")):
		return StageSASLAuth
	case isKerr && ke.Code == kerr.UnsupportedSaslMechanism.Code && ci.Mechanism != "":
		if brokerMsg != "" {
			return StageSASLAuth // a SaslAuthenticate error carries a message; a handshake's does not
		}
		if ci.Stage == StageSASLAuth {
			return StageSASLAuth
		}
		return StageSASLHandshake
	}
	return ""
}

// isTCPDialErr is a failure of the TCP connect itself (not of a TLS
// handshake on top of it).
func isTCPDialErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isTLSErr(err error, msg string) bool {
	var certErr *tls.CertificateVerificationError
	var unkAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	return errors.As(err, &certErr) || errors.As(err, &unkAuth) || errors.As(err, &hostErr) || errors.As(err, &invErr) ||
		errors.As(err, &recErr) || errors.As(err, &alert) || strings.Contains(msg, "tls: ") || strings.Contains(msg, "x509: ")
}

func tlsReason(err error, msg string, closed bool) (reason, fix string) {
	var unkAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	switch {
	case errors.As(err, &unkAuth) || strings.Contains(msg, "unknown authority"):
		return "the broker's certificate is not trusted", "pass --tls-ca with the CA that signed the broker's certificate (--tls-insecure-skip-verify only to test)"
	case errors.As(err, &hostErr) || strings.Contains(msg, "certificate is valid for"):
		return "the broker's certificate does not name this host", "pass --tls-server-name with a name the certificate holds, or connect by that name"
	case errors.As(err, &invErr):
		return "the broker's certificate is not valid (expired or not yet valid?)", "renew the broker's certificate, or check this machine's clock"
	case errors.As(err, &recErr) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the broker does not speak TLS", fixNotTLS
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate authority"):
		return "the broker refused the client certificate", "pass --tls-cert and --tls-key signed by a CA the broker trusts"
	case closed:
		return "the broker closed the connection during the TLS handshake", fixNotTLS
	}
	return "", "check --tls-ca, --tls-cert/--tls-key and --tls-server-name"
}

func saslReason(st Stage, ke *kerr.Error, brokerMsg, mech string) (reason, fix string) {
	plainMech := strings.EqualFold(mech, "PLAIN")
	if mech == "SASL" { // Classify without the mechanism
		mech = "the SASL mechanism"
	}
	switch {
	case st == StageSASLHandshake && ke.Code == kerr.UnsupportedSaslMechanism.Code:
		return fmt.Sprintf("SASL mechanism %s not enabled on the broker", mech), fixSCRAM
	case plainMech && st == StageSASLAuth:
		return "the broker refused PLAIN", fixPLAIN
	case strings.Contains(brokerMsg, "unknown user"):
		return "unknown user", fixPassword
	case strings.HasPrefix(brokerMsg, "scram") || ke.Code == kerr.SaslAuthenticationFailed.Code || ke.Code == kerr.NetworkException.Code:
		return "wrong user or password", fixPassword
	case ke.Code == kerr.UnsupportedSaslMechanism.Code:
		return fmt.Sprintf("the broker refused %s", mech), fixSCRAM
	case ke.Code == kerr.IllegalSaslState.Code:
		return "the broker rejected the exchange", fixSCRAM
	}
	return "login refused", fixPassword
}

// kerrMessage is the broker's own message that franz-go appended to a Kafka
// error ("CODE: description: message"), or "".
func kerrMessage(msg string, ke *kerr.Error) string {
	if i := strings.Index(msg, ke.Error()); i >= 0 {
		rest := msg[i+len(ke.Error()):]
		if r, ok := strings.CutPrefix(rest, ": "); ok {
			return r
		}
	}
	return ""
}

// brokerSaid renders a Kafka error for an operator: the broker's message
// first (it is the real reason), then the code it came with.
func brokerSaid(ke *kerr.Error, brokerMsg string) error {
	if brokerMsg == "" {
		return fmt.Errorf("error %d %s: %s", ke.Code, ke.Message, ke.Description)
	}
	return fmt.Errorf("the broker said %q (error %d %s)", brokerMsg, ke.Code, ke.Message)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
