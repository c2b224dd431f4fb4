package wire

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// listGroupsBody is a ListGroups response of version v listing groups, as
// a broker sends it.
func listGroupsBody(v int16, groups ...string) []byte {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Version = v
	resp.ThrottleMillis = 7
	for i, g := range groups {
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g, "consumer", "Empty", "classic"
		if i%2 == 1 {
			lg.UnknownTags.Set(3, []byte("tagged"))
		}
		resp.Groups = append(resp.Groups, lg)
	}
	if len(groups) > 2 {
		resp.UnknownTags.Set(9, []byte{1, 2, 3})
	}
	return resp.AppendTo(nil)
}

// readHeld decodes body as heldResponse of version v asking about asked.
func readHeld(v int16, body []byte, asked ...string) (map[string]bool, *heldResponse, error) {
	req := newHeldRequest(asked)
	req.Version = v
	resp := req.ResponseKind().(*heldResponse)
	err := resp.ReadFrom(body)
	return resp.heldMap(), resp, err
}

func TestHeldResponseMatchesKmsg(t *testing.T) {
	t.Parallel()
	listed := []string{"orders-app", "payments", "", "grüße", "bench-04242"}
	for v := int16(0); v <= heldMaxVersion; v++ {
		body := listGroupsBody(v, listed...)
		held, resp, err := readHeld(v, body, "payments", "bench-04242", "not-there", "")
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		want := map[string]bool{"payments": true, "bench-04242": true, "not-there": false, "": true}
		if fmt.Sprint(held) != fmt.Sprint(want) {
			t.Errorf("v%d: held %v, want %v", v, held, want)
		}
		if len(resp.Groups) != 0 {
			t.Errorf("v%d: groups were kept", v)
		}
		if v >= 1 && resp.ThrottleMillis != 7 {
			t.Errorf("v%d: throttle %d", v, resp.ThrottleMillis)
		}
		// Every truncation fails as kmsg's own decoding does.
		for cut := 0; cut < len(body); cut++ {
			k := kmsg.ListGroupsResponse{Version: v}
			kerr := k.ReadFrom(body[:cut])
			_, _, herr := readHeld(v, body[:cut], "payments")
			if (kerr == nil) != (herr == nil) {
				t.Fatalf("v%d cut at %d: kmsg %v, held %v", v, cut, kerr, herr)
			}
		}
	}
	// An error code is carried; an empty listing holds nothing.
	k := kmsg.NewPtrListGroupsResponse()
	k.Version, k.ErrorCode = 5, 15
	held, resp, err := readHeld(5, k.AppendTo(nil), "a")
	if err != nil || resp.ErrorCode != 15 || held["a"] {
		t.Fatalf("error code: %v %d %v", err, resp.ErrorCode, held)
	}
}

func TestHeldRequestEncodesAsKmsg(t *testing.T) {
	t.Parallel()
	for v := int16(0); v <= heldMaxVersion; v++ {
		r := newHeldRequest([]string{"a"})
		r.SetVersion(v)
		k := kmsg.NewPtrListGroupsRequest()
		k.SetVersion(v)
		if string(r.AppendTo(nil)) != string(k.AppendTo(nil)) || r.Key() != k.Key() || r.IsFlexible() != k.IsFlexible() {
			t.Fatalf("v%d: the request differs from kmsg's", v)
		}
		rk := r.ResponseKind()
		if rk.GetVersion() != v || rk.Key() != 16 {
			t.Fatalf("v%d: response kind version %d key %d", v, rk.GetVersion(), rk.Key())
		}
		if back := rk.RequestKind().(*heldRequest); back.GetVersion() != v || len(back.asked) != 1 {
			t.Fatalf("v%d: request kind %+v", v, back)
		}
	}
	if got := newHeldRequest(nil).MaxVersion(); got > heldMaxVersion {
		t.Fatalf("max version %d beyond the layouts heldResponse reads", got)
	}
}

// FuzzHeldResponse: whatever the bytes, the membership reader agrees with
// kmsg's full decoding: both fail or both succeed, and a group is held
// exactly when kmsg's listing names it.
func FuzzHeldResponse(f *testing.F) {
	for v := int16(0); v <= heldMaxVersion; v++ {
		f.Add(uint8(v), listGroupsBody(v, "a", "payments", "zz"))
	}
	f.Add(uint8(3), []byte{0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ver uint8, body []byte) {
		v := int16(ver % (heldMaxVersion + 1))
		asked := []string{"a", "payments", ""}
		held, resp, herr := readHeld(v, body, asked...)
		k := kmsg.ListGroupsResponse{Version: v}
		kerr := k.ReadFrom(body)
		if (kerr == nil) != (herr == nil) {
			t.Fatalf("v%d: kmsg %v, held %v", v, kerr, herr)
		}
		if herr != nil {
			if herr.Error() != kerr.Error() {
				t.Fatalf("v%d: kmsg %v, held %v", v, kerr, herr)
			}
			return
		}
		if resp.ErrorCode != k.ErrorCode || resp.ThrottleMillis != k.ThrottleMillis {
			t.Fatalf("v%d: header %d/%d, kmsg %d/%d", v, resp.ErrorCode, resp.ThrottleMillis, k.ErrorCode, k.ThrottleMillis)
		}
		listed := map[string]bool{}
		for _, g := range k.Groups {
			listed[g.Group] = true
		}
		for _, g := range asked {
			if held[g] != listed[g] {
				t.Fatalf("v%d: group %q held %v, kmsg lists it: %v", v, g, held[g], listed[g])
			}
		}
	})
}

// TopicPartitions.Add keeps each topic's partitions sorted and unique
// whatever the order they come in, one at a time or in bulk.
func TestTopicPartitionsAdd(t *testing.T) {
	t.Parallel()
	tp := TopicPartitions{}
	for _, p := range []int32{3, 1, 2, 3, 0, 9, 5, 1} {
		tp.Add("t", p)
	}
	tp.Add("t", 12, 11, 10, 9, 8, 7, 6, 5, 4, 4)
	tp.Add("u")
	want := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if got := tp["t"]; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(tp["u"]) != 0 || !slices.Equal(tp.Topics(), []string{"t", "u"}) {
		t.Errorf("%v", tp)
	}
}
