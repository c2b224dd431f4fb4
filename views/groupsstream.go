package views

import (
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// StreamGroupsList writes an offline list on p as json (jsonl: a row a
// line) one row at a time (GroupRowSet): a million explicit entries are
// listed without a million rows in memory. The document is the same as
// GroupsListView's.
func StreamGroupsList(p *render.Printer, sources GroupsSourcesView, set *inspect.GroupRowSet, filter inspect.GroupFilter) error {
	var head struct {
		Sources GroupsSourcesView `json:"sources"`
		Total   int               `json:"total"`
		Shown   int               `json:"shown"`
	}
	head.Sources = sources
	head.Total, head.Shown = set.Len(), set.Len()
	filtered := filter != (inspect.GroupFilter{})
	var err error
	if p.Format == render.JSONL {
		lw := p.JSONLines(GroupsListView{})
		set.Each(func(r *inspect.GroupRow) bool {
			if !filtered || filter.Match(r) {
				err = lw.Write(r)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
		return lw.Flush()
	}
	if filtered {
		// The document says how many are shown before it lists them.
		head.Shown = 0
		set.Each(func(r *inspect.GroupRow) bool {
			if filter.Match(r) {
				head.Shown++
			}
			return true
		})
	}
	d, err := p.JSONDoc(GroupsListView{}, &head, "groups")
	if err != nil {
		return err
	}
	set.Each(func(r *inspect.GroupRow) bool {
		if !filtered || filter.Match(r) {
			err = d.Add(r)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	return d.Close()
}
