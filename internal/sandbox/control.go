package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// Move is one group whose coordinator changed with a broker stop or start.
type Move struct {
	Group string `json:"group"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// ChangeResult is what a stop or start did.
type ChangeResult struct {
	Broker            string   `json:"broker"`
	Action            string   `json:"action"` // stop | start
	Changed           bool     `json:"changed"`
	AssignmentVersion int64    `json:"assignmentVersion"`
	Brokers           []string `json:"brokers"` // brokers[] of the new assignment
	Moved             []Move   `json:"moved"`
}

// Change stops or starts a broker and reports which known groups moved.
func (s *Sandbox) Change(action, id string) (ChangeResult, error) {
	res := ChangeResult{Broker: id, Action: action, Moved: []Move{}, Brokers: []string{}}
	s.refreshGroups()
	groups := s.knownGroups()
	before := make(map[string]string, len(groups))
	for _, g := range groups {
		before[g] = s.Coordinator(g)
	}
	var err error
	switch action {
	case "stop":
		res.Changed, err = s.StopBroker(id)
	case "start":
		res.Changed, err = s.StartBroker(id)
	default:
		return res, fmt.Errorf("unknown action %q (stop or start)", action)
	}
	if err != nil {
		return res, err
	}
	if a := s.Assignment(); a != nil {
		res.AssignmentVersion = a.AssignmentVersion
		for _, b := range a.Brokers {
			res.Brokers = append(res.Brokers, b.ID)
		}
	}
	for _, g := range groups {
		if to := s.Coordinator(g); to != before[g] {
			res.Moved = append(res.Moved, Move{Group: g, From: before[g], To: to})
		}
	}
	return res, nil
}

// RestartResult is a restart: the stop's and the start's results.
type RestartResult struct {
	Stop  ChangeResult `json:"stop"`
	Start ChangeResult `json:"start"`
}

// Restart stops a running broker and starts it again: two versions.
func (s *Sandbox) Restart(id string) (RestartResult, error) {
	var r RestartResult
	var err error
	if r.Stop, err = s.Change("stop", id); err != nil {
		return r, err
	}
	r.Start, err = s.Change("start", id)
	return r, err
}

// ControlHelp lists the control commands (stdin and HTTP).
const ControlHelp = `commands:
  stop kaas-N     stop a broker (listener and connections close; the controller rewrites assignment.json)
  start kaas-N    start a stopped broker again on its old address
  restart kaas-N  stop then start a broker (two assignment versions, as a rolling restart's step)
  status          brokers, controller, assignment version, groups per broker
  groups          every known group with its coordinator and routing tier
  consumers [stop|start GROUP|all]
                  list the demo's consumer groups, or stop/start their members (stopped groups turn Empty)
  freeze kaas-N   freeze a broker as SIGSTOP does (connections accepted, nothing answered; still listed alive)
  thaw kaas-N     answer what a frozen broker read meanwhile, and everything after
  quirk zero-timestamp-offsets on|off
                  answer ListOffsets by timestamp with offset 0, as kaas's Go generation does
  quirk empty-offsetfetch-all on|off
                  answer OffsetFetch of every committed offset (null topics) with none, as kaas does
  quirk kaas-manifests on|off
                  manifest.json only on open, takeover and close, trailing the log as kaas's does (on, the default),
                  or at every refresh (off); segment files in kaas's format are written either way
  help            this text
  quit            stop the sandbox (also Ctrl-C)
HTTP (the control endpoint): GET /status, POST /stop?broker=kaas-N, POST /start?broker=kaas-N,
  POST /restart?broker=kaas-N,
  POST /consumers/stop?group=G|all, POST /consumers/start?group=G|all,
  POST /quirk?name=zero-timestamp-offsets|empty-offsetfetch-all|kaas-manifests&state=on|off, POST /quit`

// ErrQuit is returned by Command for "quit".
var ErrQuit = errors.New("quit")

// Command runs one control command line and returns its human-readable reply.
func (s *Sandbox) Command(line string) (string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	switch strings.ToLower(f[0]) {
	case "help", "?":
		return ControlHelp, nil
	case "quit", "exit":
		return "", ErrQuit
	case "status":
		return FormatStatus(s.Status()), nil
	case "groups":
		s.refreshGroups()
		return s.formatGroups(), nil
	case "consumers":
		return s.consumersCommand(f[1:])
	case "freeze", "thaw":
		return s.freezeCommand(strings.ToLower(f[0]), f[1:])
	case "quirk":
		if len(f) != 3 || (f[2] != "on" && f[2] != "off") {
			return "", fmt.Errorf("usage: quirk zero-timestamp-offsets|empty-offsetfetch-all|kaas-manifests on|off")
		}
		what, err := s.SetQuirk(f[1], f[2] == "on")
		if err != nil {
			return "", err
		}
		return what + ": " + f[2], nil
	case "restart":
		if len(f) != 2 {
			return "", fmt.Errorf("usage: restart kaas-N")
		}
		r, err := s.Restart(f[1])
		if err != nil {
			return "", err
		}
		return FormatChange(r.Stop) + "\n" + FormatChange(r.Start), nil
	case "stop", "start":
		if len(f) != 2 {
			return "", fmt.Errorf("usage: %s kaas-N", f[0])
		}
		res, err := s.Change(strings.ToLower(f[0]), f[1])
		if err != nil {
			return "", err
		}
		return FormatChange(res), nil
	}
	return "", fmt.Errorf("unknown command %q; try 'help'", f[0])
}

// FormatChange renders a ChangeResult for people.
func FormatChange(r ChangeResult) string {
	verb := map[string]string{"stop": "stopped", "start": "started"}[r.Action]
	if !r.Changed {
		state := map[string]string{"stop": "stopped", "start": "running"}[r.Action]
		return fmt.Sprintf("%s is already %s; nothing changed", r.Broker, state)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: assignment.json v%d written (brokers: %s)", verb, r.Broker, r.AssignmentVersion, strings.Join(r.Brokers, ", "))
	if len(r.Moved) == 0 {
		b.WriteString("; no known group moved")
		return b.String()
	}
	fmt.Fprintf(&b, "; %d group(s) moved:", len(r.Moved))
	for _, m := range r.Moved {
		fmt.Fprintf(&b, "\n  %s: %s -> %s", m.Group, orNone(m.From), orNone(m.To))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// FormatStatus renders a Status for people.
func FormatStatus(st Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "assignment v%d, controller %s (epoch %d), placement %s, %d known group(s)\n",
		st.AssignmentVersion, orNone(st.Controller), st.ControllerEpoch, st.Placement, len(st.Groups))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tNODE\tADDR\tSTATE\tGROUPS\tROLE")
	for _, br := range st.Brokers {
		role := ""
		if br.Controller {
			role = "controller"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\n", br.ID, br.NodeID, br.Addr, br.State, br.Groups, role)
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func (s *Sandbox) formatGroups() string {
	rs := s.route.Load()
	groups := s.knownGroups()
	if len(groups) == 0 {
		return "no groups yet"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tCOORDINATOR\tTIER")
	for _, g := range groups {
		coord, tier := "", "none"
		if rs != nil {
			r := rs.router.Group(g)
			coord, tier = r.Coordinator, string(r.Tier)
		}
		fmt.Fprintf(tw, "%q\t%s\t%s\n", g, orNone(coord), tier)
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// ControlServer is the HTTP control endpoint on loopback.
type ControlServer struct {
	ln  net.Listener
	srv *http.Server
}

// URL is the endpoint's base URL.
func (c *ControlServer) URL() string { return "http://" + c.ln.Addr().String() }

// Close stops the endpoint.
func (c *ControlServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
}

// ServeControl starts the HTTP control endpoint on addr (e.g.
// "127.0.0.1:0"). onQuit runs for POST /quit.
//
//	GET  /status                 Status as JSON (?format=text: the status table)
//	POST /stop?broker=kaas-1     ChangeResult as JSON (?format=text: one line per moved group)
//	POST /start?broker=kaas-1    ChangeResult as JSON
//	POST /restart?broker=kaas-1  RestartResult ({"stop":…,"start":…}) as JSON
//	POST /quirk?name=zero-timestamp-offsets&state=on|off
//	                             {"quirk":"zero-timestamp-offsets","on":true}
//	POST /quit                   {"quitting":true}
//
// Errors come back as {"error":"..."} with 400 (bad request) or 404
// (unknown broker).
func (s *Sandbox) ServeControl(addr string, onQuit func()) (*ControlServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", s.controlStatus)
	mux.HandleFunc("POST /restart", s.brokerAction(func(id string) (any, error) { return s.Restart(id) }, nil))
	for _, action := range []string{"stop", "start"} {
		mux.HandleFunc("POST /"+action, s.brokerAction(func(id string) (any, error) { return s.Change(action, id) },
			func(res any) string { return FormatChange(res.(ChangeResult)) }))
	}
	s.serveDemoControl(mux, controlReply)
	mux.HandleFunc("POST /quirk", s.controlQuirk)
	mux.HandleFunc("POST /quit", func(w http.ResponseWriter, r *http.Request) {
		controlReply(w, 200, map[string]bool{"quitting": true})
		if onQuit != nil {
			go onQuit()
		}
	})
	mux.HandleFunc("/", controlFallback)
	cs := &ControlServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() { _ = cs.srv.Serve(ln) }()
	return cs, nil
}

// controlReply writes v as the endpoint's indented JSON answer with the
// status code.
func controlReply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// controlStatus answers GET /status: the status as JSON, or as the status
// table with ?format=text.
func (s *Sandbox) controlStatus(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("format") == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(FormatStatus(s.Status()) + "\n"))
		return
	}
	controlReply(w, 200, s.Status())
}

// brokerAction is the handler of an action on the broker ?broker= names:
// its result as JSON (as text from text, when given and ?format=text), 404
// for a broker the sandbox does not have.
func (s *Sandbox) brokerAction(do func(id string) (any, error), text func(any) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("broker")
		if id == "" {
			controlReply(w, 400, map[string]string{"error": "missing ?broker=kaas-N"})
			return
		}
		res, err := do(id)
		switch {
		case errors.Is(err, ErrUnknownBroker):
			controlReply(w, 404, map[string]string{"error": err.Error()})
		case err != nil:
			controlReply(w, 500, map[string]string{"error": err.Error()})
		case text != nil && r.URL.Query().Get("format") == "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte(text(res) + "\n"))
		default:
			controlReply(w, 200, res)
		}
	}
}

// controlQuirk answers POST /quirk: turns the named quirk on or off.
func (s *Sandbox) controlQuirk(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, state := q.Get("name"), q.Get("state")
	if state != "on" && state != "off" {
		controlReply(w, 400, map[string]string{"error": "usage: POST /quirk?name=zero-timestamp-offsets|empty-offsetfetch-all|kaas-manifests&state=on|off"})
		return
	}
	if _, err := s.SetQuirk(name, state == "on"); err != nil {
		controlReply(w, 400, map[string]string{"error": err.Error()})
		return
	}
	controlReply(w, 200, map[string]any{"quirk": name, "on": state == "on"})
}

// controlFallback answers every other request: 405 for a known endpoint
// asked with the wrong method, else 404 with the endpoint's help.
func controlFallback(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/stop", "/start", "/restart", "/quit", "/quirk":
		controlReply(w, 405, map[string]string{"error": "use POST " + r.URL.Path})
		return
	case "/status":
		controlReply(w, 405, map[string]string{"error": "use GET /status"})
		return
	}
	controlReply(w, 404, map[string]string{"error": "unknown endpoint " + r.Method + " " + r.URL.Path, "help": ControlHelp})
}
