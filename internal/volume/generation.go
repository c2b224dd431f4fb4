package volume

// Generation is the kaas generation that wrote (and reads) a volume. What is
// live, legacy or a hazard on a volume depends on it (SPEC §1 "Generations"):
//
//	                         GenGo (Go ≤ 0.1.190, Rust ≤ 0.2.15)  Gen016 (Rust 0.2.16–0.2.17)   Gen018 (Rust 0.2.18)
//	live offsets dir         DATA/__consumer_offsets             CD/__consumer_offsets         CD/__consumer_offsets
//	plain-map offset file    offsets                             offsets (v1 fallback)         read as EMPTY (hazard)
//	DATA/__consumer_offsets  live                                migrated at boot, protected   legacy (operator deletes it)
//
// Every finding, fix and write names the generation it assumes and never
// applies one generation's fix to another.
type Generation string

const (
	// GenUnknown: not determined (no evidence and nothing pinned).
	GenUnknown Generation = ""
	// GenGo: the Go flavour (≤ 0.1.190) and Rust ≤ 0.2.15.
	GenGo Generation = "go"
	// Gen016: Rust 0.2.16–0.2.17 (a boot shim migrates the old dir).
	Gen016 Generation = "0.2.16"
	// Gen018: Rust 0.2.18 (today).
	Gen018 Generation = "0.2.18"
)

// Label is the generation as shown to users.
func (g Generation) Label() string {
	switch g {
	case GenGo:
		return "Go / Rust ≤ 0.2.15"
	case Gen016:
		return "Rust 0.2.16–0.2.17"
	case Gen018:
		return "Rust 0.2.18"
	}
	return "unknown"
}

// LiveOffsetsInDataDir reports whether the brokers of this generation read
// and write DATA/__consumer_offsets (rather than CD/__consumer_offsets).
func (g Generation) LiveOffsetsInDataDir() bool { return g == GenGo }

// PlainMapIsOffsets reports whether a plain-map offset file ({"t/0":12}) is
// read by this generation's brokers as the offsets it holds. Only 0.2.18
// reads it as empty. An unknown generation answers false: callers that
// must not guess check Known first.
func (g Generation) PlainMapIsOffsets() bool { return g == GenGo || g == Gen016 }

// Known reports whether the generation was determined or pinned.
func (g Generation) Known() bool { return g != GenUnknown }
