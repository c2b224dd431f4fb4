package sandbox

import "github.com/twmb/franz-go/pkg/kmsg"

// listOffsets answers ListOffsets as the emulated generation's brokers
// do: one whose ListOffsets read_committed answers the high watermark,
// not the last stable offset (Rust 0.2.18, seen on a real cluster: the
// volume model's BrokerFacts.ListsStableOffset), is asked by kfake with
// read_uncommitted isolation; kfake's fetch still holds read_committed
// consumers at the last stable offset, as that broker's does.
func (s *Sandbox) listOffsets(f *frame) *item {
	spec, _ := s.opts.Generation.Spec()
	if spec.Broker.ListsStableOffset {
		return relay(f)
	}
	req, err := f.decode()
	if err != nil {
		return relay(f)
	}
	r := req.(*kmsg.ListOffsetsRequest)
	if r.IsolationLevel == 0 {
		return relay(f)
	}
	r.IsolationLevel = 0
	it := relay(f)
	it.fwd = f.withBody(r)
	return it
}
