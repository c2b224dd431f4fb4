package inspect

// TopicCommits is how many partitions of one topic a group has committed
// offsets for (groups list --topic).
type TopicCommits struct {
	Topic string `json:"topic"`
	// File counts the partitions in the offset file brokers load (the
	// cluster-dir one, else the legacy one).
	File int `json:"file"`
	// Live counts the partitions the coordinator answered OffsetFetch with
	// an offset for; left out without brokers.
	Live *int `json:"live,omitempty"`
}

// MatchTopics keeps the rows of groups with a committed offset on any of
// topics, in the offset files (file: group → topic → partitions) or on the
// coordinator (live, nil without brokers), and records the counts on each
// kept row.
func MatchTopics(rows []GroupRow, topics []string, file, live map[string]map[string]int) []GroupRow {
	out := make([]GroupRow, 0, len(rows))
	for _, r := range rows {
		var tc []TopicCommits
		any := false
		for _, t := range topics {
			c := TopicCommits{Topic: t, File: file[r.Group][t]}
			if live != nil {
				n := live[r.Group][t]
				c.Live = &n
				any = any || n > 0
			}
			any = any || c.File > 0
			tc = append(tc, c)
		}
		if any {
			r.TopicOffsets = tc
			out = append(out, r)
		}
	}
	return out
}
