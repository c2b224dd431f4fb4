package inspect

import (
	"net"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// KnownBroker is one broker kaasctl knows of, from any of its sources:
// assignment.json's brokers[], the brokers' metadata, the --brokers
// addresses. kaas removes a dead broker from brokers[] and from its
// metadata, so a broker that is down is often known only from --brokers:
// the probe and the exporter still name it (as failed, or down).
type KnownBroker struct {
	// Name is the broker id (brokers[], or the metadata's node named as
	// the volume names brokers); for a --brokers address no metadata
	// advertises, the id its host names ("kaas-2" of kaas-2.kaas:9092,
	// when brokers[] ids look alike), else the address itself.
	Name string `json:"broker"`
	// Node is the node id (-1: unknown).
	Node int32  `json:"node"`
	Addr string `json:"addr,omitempty"`
	// Listed: in brokers[], with Health there.
	Listed bool   `json:"listed"`
	Health string `json:"health,omitempty"`
	// InMetadata: the metadata advertises the node.
	InMetadata bool `json:"inMetadata"`
	// Seed: a --brokers address names it.
	Seed bool `json:"seed"`
}

// OnlySeed reports whether the broker is known from --brokers alone: no
// source but the operator's list says it exists.
func (b KnownBroker) OnlySeed() bool { return b.Seed && !b.Listed && !b.InMetadata }

// Sources names where the broker is known from.
func (b KnownBroker) Sources() []string {
	var out []string
	if b.Listed {
		out = append(out, "brokers[]")
	}
	if b.InMetadata {
		out = append(out, "metadata")
	}
	if b.Seed {
		out = append(out, "--brokers")
	}
	return out
}

// KnownBrokers merges the brokers of a (nil: no volume), of the metadata
// md (nil: not asked) and the seed addresses, one entry per broker, in
// brokers[] order, then the metadata's other nodes, then the addresses no
// other source names. A seed is the metadata broker it is an address of;
// one whose host names a broker id (kaas-2.kaas:9092) is that broker.
func KnownBrokers(a *volume.Assignment, md []wire.Broker, seeds []string) []KnownBroker {
	names := NewNodeNamer(a)
	var out []KnownBroker
	index := map[string]int{}
	add := func(b KnownBroker) *KnownBroker {
		if i, ok := index[b.Name]; ok {
			return &out[i]
		}
		index[b.Name] = len(out)
		out = append(out, b)
		return &out[len(out)-1]
	}
	if a != nil {
		for _, b := range a.Brokers {
			kb := add(KnownBroker{Name: b.ID, Node: -1})
			kb.Listed, kb.Health = true, b.Health
			if o, ok := BrokerOrdinal(b.ID); ok {
				kb.Node = o
			}
		}
	}
	byAddr := map[string]string{}
	for _, b := range md {
		kb := add(KnownBroker{Name: names.Name(b.NodeID), Node: b.NodeID})
		kb.Node, kb.Addr, kb.InMetadata = b.NodeID, b.Addr(), true
		byAddr[normAddr(b.Addr())] = kb.Name
	}
	for _, s := range seeds {
		name, ok := byAddr[normAddr(s)]
		if !ok {
			name = seedName(s, a)
		}
		kb := add(KnownBroker{Name: name, Node: -1, Addr: s})
		kb.Seed = true
		if kb.Addr == "" {
			kb.Addr = s
		}
		if kb.Node < 0 {
			if o, ok := BrokerOrdinal(name); ok && name != s {
				kb.Node = o
			}
		}
	}
	return out
}

// normAddr is an address compared case-insensitively, with kaas's port
// when none is given.
func normAddr(addr string) string {
	addr = strings.ToLower(strings.TrimSpace(addr))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return net.JoinHostPort(strings.Trim(addr, "[]"), "9092")
	}
	return addr
}

// seedName is the broker id a seed address's host names, when its first
// label looks like the ids of brokers[] ("kaas-2" beside kaas-0, kaas-1),
// else the address.
func seedName(addr string, a *volume.Assignment) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	label, _, _ := strings.Cut(host, ".")
	i := strings.LastIndexByte(label, '-')
	if a == nil || i <= 0 || net.ParseIP(host) != nil {
		return addr
	}
	if _, ok := BrokerOrdinal(label); !ok {
		return addr
	}
	prefix := label[:i+1]
	if slices.ContainsFunc(a.Brokers, func(b volume.BrokerEntry) bool { return strings.HasPrefix(b.ID, prefix) }) {
		return label
	}
	return addr
}
