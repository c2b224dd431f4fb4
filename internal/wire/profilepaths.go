package wire

import (
	"sort"

	"gopkg.in/yaml.v3"
)

// ProfileKey is where a setting lives in a profile of config.yaml, as a
// dotted path ("brokers", "tls.caFile", "kaasVersion"); "" for a key no
// profile field holds. It is read off the key→field table itself (the
// field a setter fills), so it cannot drift from what Resolve reads.
func ProfileKey(key string) string {
	for _, f := range profileFields {
		if f.key != key {
			continue
		}
		for _, v := range []string{"x", "true"} {
			p := &Profile{}
			f.set(p, v)
			if path := firstSetPath(p); path != "" {
				return path
			}
		}
	}
	return ""
}

// firstSetPath is the dotted path of the one value set in p ("" when
// none).
func firstSetPath(p *Profile) string {
	b, err := yaml.Marshal(p)
	if err != nil {
		return ""
	}
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return ""
	}
	return leafPath("", m)
}

func leafPath(prefix string, m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := m[k].(map[string]any); ok {
			if p := leafPath(path, sub); p != "" {
				return p
			}
			continue
		}
		return path
	}
	return ""
}
