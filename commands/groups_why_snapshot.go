package commands

import (
	"context"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// whySnapshot is one observation of the selected groups: offline from the
// volume, live from the brokers (with the volume's files when given).
func whySnapshot(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) ([]observe.WhyState, views.GroupsSourcesView, []string, error) {
	vol := &observe.VolumeRead{Files: map[string][]inspect.GroupFileData{}, Known: map[string]bool{}}
	src := views.GroupsSourcesView{Live: cl != nil, Mode: "offline", Brokers: []views.BrokerSourceView{}}
	if g.HasVolume() {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return nil, src, nil, err
		}
		views.VolumeSources(&src, vol.Layout, vol.Assignment, vol.Scan)
		defer flushLogs(g, vol.Logs)
	}
	if cl == nil {
		out, notFound := observe.WhyOffline(vol, o.sel)
		return out, src, notFound, nil
	}
	src.Mode = "live"
	out, notFound, err := observe.WhyLive(ctx, cl, vol, o.sel, g.HasVolume(), g.Now(), g)
	return out, src, notFound, err
}
