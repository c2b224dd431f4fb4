package sandbox

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KaasPlainRefusal is the reason a kaas broker gives when it refuses PLAIN
// outside Kubernetes.
const KaasPlainRefusal = "PLAIN mechanism requires kubernetes client (SA JWT auth)"

// KaasAuth makes a kfake cluster with SASL enabled answer logins the way a
// kaas broker with SASL required does (kaas generation: the Go broker, as
// observed in the lab), through kfake's request hooks:
//   - SaslHandshake: SCRAM-SHA-512 and PLAIN accepted; any other mechanism
//     UNSUPPORTED_SASL_MECHANISM, listing those two;
//   - SaslAuthenticate with PLAIN: refused with code 33 and KaasPlainRefusal;
//   - SaslAuthenticate naming a user not in Users: NETWORK_EXCEPTION (13)
//     with `scram: unknown user "x"`; with WrongPassword, the client's final
//     SCRAM message gets 13 with `scram: authentication failed` (kfake itself
//     only closes the connection on a bad proof);
//   - MalformedKey >= 0: that request is answered with an empty body, the
//     malformed response a client without SASL gets from a SASL-required
//     kaas listener. It answers every request of that key, so leave it -1
//     where a client logs in.
//
// The SCRAM-SHA-512 exchange itself is left to kfake (kfake.Superuser).
type KaasAuth struct {
	Users         map[string]bool
	WrongPassword bool
	MalformedKey  int16
}

// Install adds the hooks to cl.
func (k KaasAuth) Install(cl *kfake.Cluster) {
	cl.ControlKey(int16(kmsg.SASLHandshake), func(r kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		req := r.(*kmsg.SASLHandshakeRequest)
		if req.Mechanism == "SCRAM-SHA-512" {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"SCRAM-SHA-512", "PLAIN"}
		if req.Mechanism != "PLAIN" {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
		return resp, nil, true
	})
	cl.ControlKey(int16(kmsg.SASLAuthenticate), func(r kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		req := r.(*kmsg.SASLAuthenticateRequest)
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		b := req.SASLAuthBytes
		switch {
		case len(b) > 0 && b[0] == 0: // PLAIN: \x00user\x00password
			resp.ErrorCode, resp.ErrorMessage = kerr.UnsupportedSaslMechanism.Code, kmsg.StringPtr(KaasPlainRefusal)
		case bytes.HasPrefix(b, []byte("n,,n=")):
			user, _, _ := strings.Cut(string(b[len("n,,n="):]), ",")
			if k.Users[user] {
				return nil, nil, false
			}
			resp.ErrorCode, resp.ErrorMessage = kerr.NetworkException.Code, kmsg.StringPtr(fmt.Sprintf("scram: unknown user %q", user))
		case bytes.HasPrefix(b, []byte("c=")) && k.WrongPassword:
			resp.ErrorCode, resp.ErrorMessage = kerr.NetworkException.Code, kmsg.StringPtr("scram: authentication failed")
		default:
			return nil, nil, false
		}
		return resp, nil, true
	})
	if k.MalformedKey >= 0 {
		cl.ControlKey(k.MalformedKey, func(r kmsg.Request) (kmsg.Response, error, bool) {
			cl.KeepControl()
			return emptyResponse{r.ResponseKind()}, nil, true
		})
	}
}

// emptyResponse is a response with no body at all.
type emptyResponse struct{ kmsg.Response }

func (emptyResponse) AppendTo(dst []byte) []byte { return dst }
func (emptyResponse) IsFlexible() bool           { return false }
