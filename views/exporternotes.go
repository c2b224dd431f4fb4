package views

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// NoteServing says where the exporter serves and what it observes: the
// volume (l, nil without one) and the brokers (cl, nil without them).
func NoteServing(g render.Notes, addr net.Addr, l *volume.Layout, cl *wire.Client, interval, window time.Duration) {
	what := []string{}
	if l != nil {
		what = append(what, "volume "+l.ClusterDir)
	}
	if cl != nil {
		what = append(what, "brokers "+strings.Join(cl.Settings.Brokers, ","))
	}
	g.Notef("exporter: serving http://%s/metrics (%s; refresh every %s, health window %s)", addr, strings.Join(what, " + "), interval, window)
}

// NoteRefreshed says what exporter --once's refresh observed: how many
// groups in how long, and how many more --max-groups left out.
func NoteRefreshed(g render.Notes, groups int, took time.Duration, dropped, maxGroups int) {
	more := ""
	if dropped > 0 {
		more = fmt.Sprintf(" (%d more matching groups left out by --max-groups %d)", dropped, maxGroups)
	}
	g.Notef("exporter: one refresh of %s in %s%s", render.Plural(groups, "group", "groups"), took.Round(time.Millisecond), more)
}
