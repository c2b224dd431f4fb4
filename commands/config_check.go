package commands

import (
	"context"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// configCheckOptions is 'config check' after flag parsing.
type configCheckOptions struct {
	Profile string // the profile NAME argument; "" for the settings in force
}

type seedCheck struct {
	Broker string `json:"broker"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Stage  string `json:"stage,omitempty"` // the connection stage that failed first
	Fix    string `json:"fix,omitempty"`
}

type configCheckView struct {
	Profile     string            `json:"profile"`
	Seeds       []seedCheck       `json:"seeds"`
	Brokers     []wire.Broker     `json:"brokers"`
	MaxVersions string            `json:"maxVersions"`
	Caps        []wire.VersionCap `json:"caps"`
	TLS         bool              `json:"tls"`
	SASL        string            `json:"sasl"`
}

func init() {
	register(Descriptor{
		Path:  "config check",
		Usage: "connect with the resolved settings: reach every seed broker, list the cluster's brokers, show the request-version cap",
		Build: configCheckCmd,
	})
}

func configCheckCmd() *cli.Command {
	return &cli.Command{
		ArgsUsage: "[NAME]",
		Action:    action(parseConfigCheck, runConfigCheck),
	}
}

func parseConfigCheck(c *cli.Context) (configCheckOptions, error) {
	name, err := optionalProfileArg(c, "config check")
	return configCheckOptions{Profile: name}, err
}

func runConfigCheck(ctx context.Context, g *Globals, o configCheckOptions) error {
	st := namedProfile(g, o.Profile)
	if st.fileErr != nil && st.explicit {
		return exit.UsageErrorf("%v", st.fileErr)
	}
	if st.err != nil {
		return exit.UsageErrorf("%v", st.err)
	}
	s := st.settings
	if len(s.Brokers) == 0 {
		return exit.UsageErrorf("%v", wire.ErrNoBrokers)
	}
	cc, err := wire.CheckConnection(ctx, s)
	if err != nil {
		return err
	}
	v := checkView(s, cc)
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Seeds, Table: checkTable(v)}); err != nil {
		return err
	}
	if len(cc.Failed) > 0 {
		return exit.ProblemsFound("%d of %d seed brokers did not answer", len(cc.Failed), len(v.Seeds))
	}
	return nil
}

// checkView is 'config check's answer: the settings checked, each seed
// with its answer, and the cluster's brokers.
func checkView(s *wire.Settings, cc *wire.ConnCheck) configCheckView {
	v := configCheckView{Profile: s.Profile, Seeds: []seedCheck{}, Brokers: cc.Brokers, MaxVersions: s.MaxVersions, Caps: cc.Caps, TLS: s.TLS.Enabled, SASL: s.SASL.Mechanism}
	for _, a := range cc.Answered {
		v.Seeds = append(v.Seeds, seedCheck{Broker: a, OK: true})
	}
	for _, b := range cc.Failed {
		v.Seeds = append(v.Seeds, seedCheck{Broker: b.Broker, Error: b.Error(), Stage: string(b.Stage), Fix: b.Fix})
	}
	return v
}

func checkTable(v configCheckView) *render.TableData {
	t := render.NewTable("NODE", "BROKER", "STATUS")
	for _, b := range v.Brokers {
		t.Add(strconv.Itoa(int(b.NodeID)), b.Addr(), "in cluster metadata")
	}
	for _, sc := range v.Seeds {
		st := "seed answered"
		if !sc.OK {
			st = sc.Error
		}
		t.Add("seed", sc.Broker, st)
	}
	return t
}
