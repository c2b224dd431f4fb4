package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Demo consumer control: an operator trying 'kaasctl offsets reset' on the
// demo must be able to stop a group's consumers (so the group becomes
// Empty) and start them again. Each demo group runs under its own context.

// ErrUnknownDemoGroup names a group the demo does not run.
var ErrUnknownDemoGroup = errors.New("not a demo consumer group")

type demoRun struct {
	g      demoGroup
	common []kgo.Opt
	cancel context.CancelFunc
	wg     *sync.WaitGroup
}

type demoControl struct {
	mu   sync.Mutex
	runs map[string]*demoRun
}

var demoControls sync.Map // *Sandbox → *demoControl

func (s *Sandbox) demoControl() *demoControl {
	v, _ := demoControls.LoadOrStore(s, &demoControl{runs: map[string]*demoRun{}})
	return v.(*demoControl)
}

// startDemoGroup starts the members of one demo group under a context of
// its own (derived from the demo's).
func (s *Sandbox) startDemoGroup(common []kgo.Opt, g demoGroup) error {
	dc := s.demoControl()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if r := dc.runs[g.group]; r != nil && r.cancel != nil {
		return nil // running
	}
	ctx, cancel := context.WithCancel(s.demoCtx)
	wg := &sync.WaitGroup{}
	for m := 0; m < g.members; m++ {
		cl, err := kgo.NewClient(append(slices.Clone(common),
			kgo.ConsumerGroup(g.group), kgo.ConsumeTopics(g.topics...),
			// A short rebalance timeout bounds how long a rebalance
			// waits for a member lost with a stopped broker's connection.
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond), kgo.RebalanceTimeout(5*time.Second),
			kgo.AutoCommitInterval(time.Second), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
		if err != nil {
			cancel()
			return err
		}
		s.demoWG.Add(1)
		wg.Add(1)
		go func() {
			defer s.demoWG.Done()
			defer wg.Done()
			// Close commits what was consumed and leaves the group, so a
			// stopped group turns Empty at once (no session timeout).
			defer cl.Close()
			for ctx.Err() == nil {
				fs := cl.PollRecords(ctx, 50)
				if g.slow {
					select {
					case <-ctx.Done():
					case <-time.After(time.Duration(1500+rand.IntN(500)) * time.Millisecond):
					}
				}
				_ = fs
			}
		}()
	}
	dc.runs[g.group] = &demoRun{g: g, common: common, cancel: cancel, wg: wg}
	return nil
}

// DemoConsumer is one demo group's consumer state.
type DemoConsumer struct {
	Group   string   `json:"group"`
	Topics  []string `json:"topics"`
	Members int      `json:"members"`
	Running bool     `json:"running"`
}

// DemoConsumers lists the demo's consumer groups (empty without --demo).
func (s *Sandbox) DemoConsumers() []DemoConsumer {
	dc := s.demoControl()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	out := []DemoConsumer{}
	for _, g := range demoGroups {
		r := dc.runs[g.group]
		if r == nil {
			continue
		}
		out = append(out, DemoConsumer{Group: g.group, Topics: g.topics, Members: g.members, Running: r.cancel != nil})
	}
	return out
}

// StopDemoConsumers stops the members of a demo group ("all": every
// group) and waits until they have left the group. It returns the groups
// it stopped.
func (s *Sandbox) StopDemoConsumers(group string) ([]string, error) {
	runs, err := s.demoRuns(group)
	if err != nil {
		return nil, err
	}
	var stopped []string
	for _, r := range runs {
		s.demoControl().mu.Lock()
		cancel, wg := r.cancel, r.wg
		r.cancel = nil
		s.demoControl().mu.Unlock()
		if cancel == nil {
			continue
		}
		cancel()
		wg.Wait()
		stopped = append(stopped, r.g.group)
	}
	return stopped, nil
}

// StartDemoConsumers starts a stopped demo group's members again.
func (s *Sandbox) StartDemoConsumers(group string) ([]string, error) {
	runs, err := s.demoRuns(group)
	if err != nil {
		return nil, err
	}
	var started []string
	for _, r := range runs {
		s.demoControl().mu.Lock()
		running := r.cancel != nil
		s.demoControl().mu.Unlock()
		if running {
			continue
		}
		if err := s.startDemoGroup(r.common, r.g); err != nil {
			return started, err
		}
		started = append(started, r.g.group)
	}
	return started, nil
}

func (s *Sandbox) demoRuns(group string) ([]*demoRun, error) {
	dc := s.demoControl()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if len(dc.runs) == 0 {
		return nil, errors.New("no demo consumers: start the sandbox with --demo")
	}
	if group == "all" {
		var out []*demoRun
		for _, g := range demoGroups {
			if r := dc.runs[g.group]; r != nil {
				out = append(out, r)
			}
		}
		return out, nil
	}
	r := dc.runs[group]
	if r == nil {
		names := make([]string, 0, len(dc.runs))
		for _, g := range demoGroups {
			names = append(names, g.group)
		}
		return nil, fmt.Errorf("%q: %w (demo groups: %s, or all)", group, ErrUnknownDemoGroup, strings.Join(names, ", "))
	}
	return []*demoRun{r}, nil
}

// consumersCommand runs "consumers [stop|start GROUP|all]".
func (s *Sandbox) consumersCommand(args []string) (string, error) {
	if len(args) == 0 || args[0] == "list" || args[0] == "status" {
		var b strings.Builder
		b.WriteString("GROUP         TOPICS            MEMBERS  STATE\n")
		for _, c := range s.DemoConsumers() {
			st := "stopped"
			if c.Running {
				st = "running"
			}
			fmt.Fprintf(&b, "%-13s %-17s %-8d %s\n", c.Group, strings.Join(c.Topics, ","), c.Members, st)
		}
		return strings.TrimRight(b.String(), "\n"), nil
	}
	if len(args) != 2 || (args[0] != "stop" && args[0] != "start") {
		return "", errors.New("usage: consumers [list] | consumers stop GROUP|all | consumers start GROUP|all")
	}
	var done []string
	var err error
	if args[0] == "stop" {
		done, err = s.StopDemoConsumers(args[1])
	} else {
		done, err = s.StartDemoConsumers(args[1])
	}
	if err != nil {
		return "", err
	}
	if len(done) == 0 {
		return fmt.Sprintf("nothing to %s: %s already %sed", args[0], args[1], map[string]string{"stop": "stopp", "start": "start"}[args[0]]), nil
	}
	if args[0] == "stop" {
		return fmt.Sprintf("stopped the consumers of %s (they left their groups, which are now Empty)", strings.Join(done, ", ")), nil
	}
	return fmt.Sprintf("started the consumers of %s again", strings.Join(done, ", ")), nil
}

// serveDemoControl adds POST /consumers/stop?group=G and
// POST /consumers/start?group=G (G may be "all") and GET /consumers.
func (s *Sandbox) serveDemoControl(mux *http.ServeMux, reply func(http.ResponseWriter, int, any)) {
	mux.HandleFunc("GET /consumers", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, s.DemoConsumers())
	})
	act := func(action string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			g := r.URL.Query().Get("group")
			if g == "" {
				reply(w, 400, map[string]string{"error": "missing ?group=GROUP (or all)"})
				return
			}
			out, err := s.consumersCommand([]string{action, g})
			switch {
			case errors.Is(err, ErrUnknownDemoGroup):
				reply(w, 404, map[string]string{"error": err.Error()})
			case err != nil:
				reply(w, 400, map[string]string{"error": err.Error()})
			default:
				reply(w, 200, map[string]any{"result": out, "consumers": s.DemoConsumers()})
			}
		}
	}
	mux.HandleFunc("POST /consumers/stop", act("stop"))
	mux.HandleFunc("POST /consumers/start", act("start"))
}
