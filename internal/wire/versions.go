package wire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// KaasMaxVersions is the highest version of each API kaas serves (its
// compatibility matrix). Requests for these keys are never sent higher:
// an older kaas fails to decode newer ApiVersions requests.
var KaasMaxVersions = map[int16]int16{
	int16(kmsg.ApiVersions):     4,
	int16(kmsg.OffsetCommit):    8,
	int16(kmsg.OffsetFetch):     8,
	int16(kmsg.FindCoordinator): 4,
	int16(kmsg.DescribeGroups):  5,
	int16(kmsg.ListGroups):      4,
	int16(kmsg.DeleteGroups):    2,
	int16(kmsg.ListOffsets):     7,
	int16(kmsg.Metadata):        10,
	int16(kmsg.OffsetDelete):    0,
}

// nameOnlyMax caps APIs whose next version addresses topics by ID only;
// kaasctl addresses topics by name.
var nameOnlyMax = map[int16]int16{
	int16(kmsg.Fetch):        12, // the exporter's record-timestamp probe (timestamps.go)
	int16(kmsg.OffsetFetch):  9,
	int16(kmsg.OffsetCommit): 9,
}

// MaxVersionsHelp lists what --max-versions accepts.
const MaxVersionsHelp = "kaas (what kaas serves; the default), latest (this kaasctl's newest), or a Kafka release such as 3.6 or 2.8.1"

// ParseMaxVersions turns a --max-versions value into the version cap the
// client applies. It never returns nil without an error.
func ParseMaxVersions(s string) (*kversion.Versions, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if len(s) > 64 || !utf8.ValidString(s) {
		return nil, fmt.Errorf("%.64q is not a version cap; use %s", s, MaxVersionsHelp)
	}
	var v *kversion.Versions
	switch t {
	case "kaas", "":
		v = kversion.Stable()
		for k, max := range KaasMaxVersions {
			if cur, ok := v.LookupMaxKeyVersion(k); !ok || cur > max {
				v.SetMaxKeyVersion(k, max)
			}
		}
	case "latest", "max", "stable":
		v = kversion.Stable()
	default:
		v = kversion.FromString(strings.TrimPrefix(t, "v"))
		if v == nil {
			return nil, fmt.Errorf("%q is not a version cap; use %s", s, MaxVersionsHelp)
		}
	}
	for k, max := range nameOnlyMax {
		if cur, ok := v.LookupMaxKeyVersion(k); ok && cur > max {
			v.SetMaxKeyVersion(k, max)
		}
	}
	return v, nil
}

// VersionCap is one API's cap, for display.
type VersionCap struct {
	API string `json:"api"`
	Key int16  `json:"key"`
	Max int16  `json:"max"`
}

// GroupAPICaps lists the caps of the APIs kaasctl uses, for display.
func GroupAPICaps(v *kversion.Versions) []VersionCap {
	var out []VersionCap
	for _, k := range []kmsg.Key{kmsg.ApiVersions, kmsg.Metadata, kmsg.FindCoordinator, kmsg.ListGroups, kmsg.DescribeGroups,
		kmsg.OffsetFetch, kmsg.OffsetCommit, kmsg.ListOffsets, kmsg.DeleteGroups, kmsg.OffsetDelete} {
		max, ok := v.LookupMaxKeyVersion(int16(k))
		if !ok {
			max = -1
		}
		out = append(out, VersionCap{API: k.Name(), Key: int16(k), Max: max})
	}
	return out
}
