package volume

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

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
	if s, ok := g.Spec(); ok {
		return s.Label
	}
	return "unknown"
}

// PlainMapIsOffsets reports whether a plain-map offset file ({"t/0":12}) is
// read by this generation's brokers as the offsets it holds. Only 0.2.18
// reads it as empty. An unknown generation answers false: callers that
// must not guess check Known first.
func (g Generation) PlainMapIsOffsets() bool {
	s, ok := g.Spec()
	return ok && s.PlainMapIsOffsets
}

// Known reports whether the generation was determined or pinned.
func (g Generation) Known() bool { return g != GenUnknown }

// How a volume's generation was decided.
const (
	GenSourceDetected     = "detected"     // from what is on the volume
	GenSourcePinned       = "pinned"       // --kaas-version, KAASCTL_KAAS_VERSION or the profile
	GenSourceUndetermined = "undetermined" // the evidence does not decide it
)

// AllGenerations lists the known generations, oldest first.
var AllGenerations = func() []Generation {
	out := make([]Generation, len(generationSpecs))
	for i, s := range generationSpecs {
		out[i] = s.Gen
	}
	return out
}()

// String is the generation's short name ("unknown" when not determined).
func (g Generation) String() string {
	if g == GenUnknown {
		return "unknown"
	}
	return string(g)
}

// KaasVersionForms names the accepted --kaas-version values, for messages.
const KaasVersionForms = "go, a Go version (0.1.190), a Rust version such as 0.2.15, 0.2.16, 0.2.17 or 0.2.18 (a leading v and a -preview suffix are accepted), or auto (detect from the volume)"

// ParseKaasVersion maps a kaas version as a user gives it to its
// generation: "go" and every Go (0.1.x) or Rust ≤ 0.2.15 version → GenGo;
// 0.2.16 and 0.2.17 → Gen016; 0.2.18 → Gen018. "auto" (or "") means
// detect: GenUnknown and no error. Anything else is an error naming the
// accepted forms.
func ParseKaasVersion(s string) (Generation, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "auto", "detect":
		return GenUnknown, nil
	case "go", "golang", "skafka":
		return GenGo, nil
	}
	v = strings.TrimPrefix(v, "v")
	v = strings.TrimSuffix(v, "-preview")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return GenUnknown, fmt.Errorf("kaas version %q: expected %s", s, KaasVersionForms)
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return GenUnknown, fmt.Errorf("kaas version %q: expected %s", s, KaasVersionForms)
		}
		n[i] = x
	}
	if g := versionGeneration(n); g != GenUnknown {
		return g, nil
	}
	return GenUnknown, fmt.Errorf("kaas version %q: kaasctl knows the volume layouts up to %s (a later kaas may have changed them); pin %s only if its release notes say the layout is unchanged; accepted: %s", s, newestKnown(), newestKnown(), KaasVersionForms)
}

// GenerationInfo is the generation kaasctl assumes for a volume and why:
// every offline view shows it, and every finding, fix and write follows it.
type GenerationInfo struct {
	Gen Generation `json:"-"`
	// Name is the generation's short name: go, 0.2.16, 0.2.18 or unknown.
	Name  string `json:"generation"`
	Label string `json:"label"`
	// Source is detected, pinned or undetermined.
	Source   string `json:"source"`
	Evidence string `json:"evidence"`
	// Candidates are the generations the evidence allows when it does not
	// decide one (e.g. 0.2.16 and 0.2.18 when only the cluster dir holds
	// offsets).
	Candidates []string `json:"candidates"`
	// LiveOffsetsDir is the offsets dir the brokers of the assumed
	// generation read and write; "" when it cannot be told.
	LiveOffsetsDir string `json:"liveOffsetsDir"`
	// Ambiguous: both offsets dirs hold group files and nothing is pinned.
	Ambiguous bool `json:"ambiguous"`
	// SameDir: the data dir and the cluster dir are one directory (by
	// identity, whatever their spelling), so there is one offsets dir.
	SameDir bool `json:"sameDir"`

	cands []Generation
}

// Resolved reports whether the info was computed (detected or pinned).
func (gi GenerationInfo) Resolved() bool { return gi.Source != "" }

// Summary is the one-line "which generation and why" of every offline view.
func (gi GenerationInfo) Summary() string {
	s := "kaas generation " + gi.Label + " (" + gi.Source
	if gi.Evidence != "" {
		s += ": " + gi.Evidence
	}
	return s + ")"
}

// Short is Summary without the evidence, for the notes of everyday
// commands: "kaas generation Rust 0.2.18 (detected)". An undetermined
// generation says where the reason is and how to pin it.
func (gi GenerationInfo) Short() string {
	if gi.Gen == GenUnknown || gi.Source == "undetermined" {
		return "kaas generation " + gi.Label + " (undetermined: -v or 'kaasctl volume check' says why; --kaas-version pins it)"
	}
	return "kaas generation " + gi.Label + " (" + gi.Source + ")"
}

// Assumes is the short clause findings and fixes carry ("assuming Rust 0.2.18, pinned").
func (gi GenerationInfo) Assumes() string {
	if gi.Gen == GenUnknown {
		return "kaas generation undetermined"
	}
	return "assuming kaas " + gi.Label + ", " + gi.Source
}

// PlainMapVerdict says what the brokers do with a plain-map offset file:
// known is false when the possible generations disagree (then callers must
// not state either as fact).
func (gi GenerationInfo) PlainMapVerdict() (isOffsets, known bool) {
	if gi.Gen != GenUnknown {
		return gi.Gen.PlainMapIsOffsets(), true
	}
	if len(gi.cands) == 0 {
		return false, false
	}
	first := gi.cands[0].PlainMapIsOffsets()
	for _, c := range gi.cands[1:] {
		if c.PlainMapIsOffsets() != first {
			return false, false
		}
	}
	return first, true
}

// Roles of an offsets dir under the assumed generation (OffsetScanItem.Layout).
const (
	// OffsetsCurrent ("current") is the live dir: the one the brokers of
	// the assumed generation read and write (DATA/__consumer_offsets on
	// GenGo, CD/__consumer_offsets from 0.2.16 on).
	// OffsetsLegacy ("legacy") is DATA/__consumer_offsets on 0.2.18 only.
	OffsetsNotRead      = "notRead"      // CD/__consumer_offsets on GenGo: its brokers never read it
	OffsetsPreMigration = "preMigration" // DATA/__consumer_offsets on 0.2.16–0.2.17: migrated by the broker at boot
	OffsetsUndetermined = "undetermined" // either dir when the live one cannot be told
)

// roleAt is the role of the offsets dir at loc: the assumed generation's
// (from the volume model), or the one every candidate generation agrees
// on, else OffsetsUndetermined.
func (gi GenerationInfo) roleAt(loc Location) string {
	if gi.SameDir {
		return OffsetsCurrent
	}
	cands := gi.cands
	if gi.Gen != GenUnknown {
		cands = []Generation{gi.Gen}
	} else if gi.LiveOffsetsDir == "" {
		return OffsetsUndetermined
	}
	role := ""
	for _, g := range cands {
		s, ok := g.Spec()
		if !ok {
			return OffsetsUndetermined
		}
		if r := s.roleAt(loc); role == "" {
			role = r
		} else if r != role {
			return OffsetsUndetermined
		}
	}
	if role == "" {
		return OffsetsUndetermined
	}
	return role
}

// dirProbe is what detection learns about one offsets dir.
type dirProbe struct {
	path     string
	exists   bool
	hasGroup bool
	st       os.FileInfo
}

func probeOffsetsDir(p string) dirProbe {
	d := dirProbe{path: p}
	if p == "" {
		return d
	}
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return d
	}
	d.exists, d.st = true, st
	f, err := os.Open(p)
	if err != nil {
		return d
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".json") && e.Type().IsRegular() {
				d.hasGroup = true
				return d
			}
		}
		if err != nil {
			return d
		}
	}
}

// SameDir reports whether a and b name one directory (os.SameFile after
// following links), whatever their spelling: relative or absolute, through
// a symbolic link, with or without a trailing slash.
func SameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, err := os.Stat(a)
	if err != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(sa, sb)
}

// DataOffsetsPath is DATA/__consumer_offsets whatever its role, or "" when
// the data dir is unknown. Like OffsetsPath, for this package and tests.
func (l Layout) DataOffsetsPath() string { return l.Path(locDataOffsets) }

// WithGeneration returns l with its generation detected when nobody
// resolved it yet (a Layout built by hand, in tests or by the sandbox).
func (l Layout) WithGeneration() Layout {
	if !l.Gen.Resolved() {
		l.Gen = DetectGeneration(l)
	}
	return l
}

// LiveOffsetsDir is the offsets dir the brokers of the volume's generation
// read and write: the one place reads prefer and offset writes go. It is an
// error when that cannot be told (both dirs hold group files, or nothing
// says which generation wrote the volume).
func (l Layout) LiveOffsetsDir() (string, error) {
	l = l.WithGeneration()
	if l.Gen.LiveOffsetsDir != "" {
		return l.Gen.LiveOffsetsDir, nil
	}
	return "", &GenerationError{Info: l.Gen}
}

// GenerationError: an offsets write needs to know which dir is live.
type GenerationError struct{ Info GenerationInfo }

func (e *GenerationError) Error() string {
	return "kaasctl cannot tell which offsets dir the brokers read (" + e.Info.Evidence + "); pin the kaas version with --kaas-version go|0.2.16|0.2.18 (or KAASCTL_KAAS_VERSION, or kaasVersion in the profile)"
}

// DetectGeneration decides the generation from what is on the volume:
// which offsets dir holds group files, matched against every generation's
// live dir in the volume model. Generations that share a live dir (Rust
// 0.2.16–0.2.17 and 0.2.18) are left undetermined between them; the live
// dir is then known all the same.
func DetectGeneration(l Layout) GenerationInfo {
	v := probeVolume(l)
	gi := GenerationInfo{Source: GenSourceDetected}
	switch {
	case v.same:
		v.sameDir(&gi)
	case len(v.withGroups) >= 2:
		v.groupsInSeveral(&gi)
	case len(v.withGroups) == 1:
		v.groupsInOne(&gi)
	case len(v.existing) == 1 && len(v.unprobed) == 0 && len(v.probes) > 1 && len(gensLiveAt(v.locs[v.existing[0]])) > 0:
		v.onlyOneExists(&gi)
	default:
		v.noEvidence(&gi)
	}
	if gi.Gen == GenUnknown {
		gi.Source = GenSourceUndetermined
	}
	return gi.finish()
}

// volumeProbe is what DetectGeneration looked at: every offsets dir it
// could name (probes, at locs, in the order the generations made them
// live), those it could not (the data dir unknown), whether two of them
// are one directory, and which exist or hold group files.
type volumeProbe struct {
	l                    Layout
	probes               []dirProbe
	locs                 []Location
	unprobed             []Location
	same                 bool
	withGroups, existing []int
}

// probeVolume probes every offsets dir of the layout.
func probeVolume(l Layout) *volumeProbe {
	v := &volumeProbe{l: l, unprobed: []Location{}}
	for _, loc := range offsetsLocationsOldestFirst() {
		p := l.Path(loc)
		if p == "" {
			v.unprobed = append(v.unprobed, loc)
			continue
		}
		v.probes = append(v.probes, probeOffsetsDir(p))
		v.locs = append(v.locs, loc)
	}
	v.same = l.DataDir != "" && SameDir(l.DataDir, l.ClusterDir)
	for i := range v.probes {
		for j := i + 1; j < len(v.probes); j++ {
			v.same = v.same || (v.probes[i].exists && v.probes[j].exists && os.SameFile(v.probes[i].st, v.probes[j].st))
		}
	}
	for i, p := range v.probes {
		if p.hasGroup {
			v.withGroups = append(v.withGroups, i)
		}
		if p.exists {
			v.existing = append(v.existing, i)
		}
	}
	return v
}

// others names every probed dir but the i-th: "A and B".
func (v *volumeProbe) others(i int) string {
	var ps []string
	for j, p := range v.probes {
		if j != i {
			ps = append(ps, p.path)
		}
	}
	return strings.Join(ps, " and ")
}

// sameDir: the data dir and the cluster dir are one directory, so the
// newest generation's live dir is live under every generation, and
// nothing tells which wrote it.
func (v *volumeProbe) sameDir(gi *GenerationInfo) {
	newestLive := v.l.Path(generationSpecs[len(generationSpecs)-1].Live())
	gi.SameDir = true
	gi.cands = slices.Clone(AllGenerations)
	gi.LiveOffsetsDir = newestLive
	gi.Evidence = fmt.Sprintf("the data dir %s and the cluster dir %s are one directory, so %s is the live offsets dir under every generation; which generation wrote it cannot be told from the volume", v.l.DataDir, v.l.ClusterDir, newestLive)
}

// groupsInSeveral: more than one offsets dir holds group files, so the
// volume is ambiguous.
func (v *volumeProbe) groupsInSeveral(gi *GenerationInfo) {
	gi.Ambiguous = true
	gi.cands = slices.Clone(AllGenerations)
	var ps []string
	for _, i := range v.withGroups {
		ps = append(ps, fmt.Sprintf("%s (%s)", v.probes[i].path, liveFor(v.locs[i])))
	}
	if len(ps) == 2 {
		gi.Evidence = "both " + ps[0] + " and " + ps[1] + " hold group files"
	} else {
		gi.Evidence = strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1] + " hold group files"
	}
}

// groupsInOne: one offsets dir holds group files; the generations whose
// live dir it is are the candidates (none, one, or several that share it).
func (v *volumeProbe) groupsInOne(gi *GenerationInfo) {
	i := v.withGroups[0]
	gens := gensLiveAt(v.locs[i])
	path := v.probes[i].path
	holdsNone := ""
	if o := v.others(i); o != "" {
		verb := " holds none"
		if len(v.probes) > 2 {
			verb = " hold none"
		}
		holdsNone = " and " + o + verb
	}
	switch len(gens) {
	case 0:
		gi.cands = slices.Clone(AllGenerations)
		gi.Evidence = fmt.Sprintf("group files are in %s%s, and no kaas generation kaasctl knows reads that dir", path, holdsNone)
	case 1:
		gi.Gen = gens[0]
		gi.LiveOffsetsDir = path
		gi.Evidence = fmt.Sprintf("group files are in %s%s: only %s brokers keep offsets in %s", path, holdsNone, gensPhrase(gens), v.locs[i].place())
	default:
		gi.cands = gens
		gi.LiveOffsetsDir = path
		where := path + holdsNone
		if len(v.unprobed) > 0 {
			where = path + " (" + notLookedAt(v.unprobed) + ")"
		}
		gi.Evidence = fmt.Sprintf("group files are in %s: %s; %s use the same layout and cannot be told apart from the volume", where, gensPhrase(gens), gensApart(gens))
	}
}

// onlyOneExists: no dir holds group files yet, but only one offsets dir
// exists, and only its generations create it.
func (v *volumeProbe) onlyOneExists(gi *GenerationInfo) {
	i := v.existing[0]
	gens := gensLiveAt(v.locs[i])
	if len(gens) == 1 {
		gi.Gen = gens[0]
		gi.Evidence = fmt.Sprintf("%s exists (no group files yet) and %s does not: only %s brokers create the %s one", v.probes[i].path, v.others(i), gensPhrase(gens), v.locs[i].Root+"-dir")
	} else {
		gi.cands = gens
		gi.Evidence = fmt.Sprintf("%s exists (no group files yet) and %s does not: %s (%s cannot be told apart)", v.probes[i].path, v.others(i), gensPhrase(gens), gensApart(gens))
	}
	gi.LiveOffsetsDir = v.probes[i].path
}

// noEvidence: nothing on the volume tells the generation.
func (v *volumeProbe) noEvidence(gi *GenerationInfo) {
	gi.cands = slices.Clone(AllGenerations)
	var ps []string
	for _, p := range v.probes {
		ps = append(ps, p.path)
	}
	switch {
	case v.l.DataDir == "":
		gi.Evidence = fmt.Sprintf("no group files in %s and the data dir is unknown (pass --data-dir)", strings.Join(ps, " or "))
	default:
		gi.Evidence = fmt.Sprintf("no group files in %s", strings.Join(ps, " or "))
	}
}

// notLookedAt says which offsets dirs could not be probed: "the data dir
// is unknown, so DATA/__consumer_offsets was not looked at".
func notLookedAt(locs []Location) string {
	var ns []string
	for _, loc := range locs {
		ns = append(ns, loc.String())
	}
	return locs[0].place() + " is unknown, so " + strings.Join(ns, " and ") + " was not looked at"
}

// offsetsLocationsOldestFirst are the offsets dirs in the order the
// generations made them live (then the ones live for none).
func offsetsLocationsOldestFirst() []Location {
	var out []Location
	for _, s := range generationSpecs {
		if loc := s.Live(); !slices.Contains(out, loc) {
			out = append(out, loc)
		}
	}
	for _, loc := range offsetsLocations() {
		if !slices.Contains(out, loc) {
			out = append(out, loc)
		}
	}
	return out
}

// finish fills the derived fields.
func (gi GenerationInfo) finish() GenerationInfo {
	gi.Name, gi.Label = gi.Gen.String(), gi.Gen.Label()
	if gi.Gen == GenUnknown && len(gi.cands) > 0 && !slices.Equal(gi.cands, AllGenerations) {
		ls := make([]string, len(gi.cands))
		for i, c := range gi.cands {
			ls[i] = c.Label()
		}
		gi.Label = strings.Join(ls, " or ")
	}
	gi.Candidates = []string{}
	if gi.Gen == GenUnknown {
		for _, c := range gi.cands {
			gi.Candidates = append(gi.Candidates, c.String())
		}
	}
	return gi
}

// Pin replaces detection with the generation the user named; from says
// where ("--kaas-version 0.1.190", "KAASCTL_KAAS_VERSION", "profile prod").
// What detection saw stays in the evidence.
func (gi GenerationInfo) Pin(l Layout, g Generation, from string) GenerationInfo {
	out := GenerationInfo{Gen: g, Source: GenSourcePinned, SameDir: gi.SameDir}
	out.Evidence = "by " + from + "; the volume says: " + gi.Evidence
	out.LiveOffsetsDir = l.LiveOffsetsDirOf(g) // "" when its root (the data dir) is unknown
	if gi.SameDir {                            // one dir under every generation: keep detection's spelling
		out.LiveOffsetsDir = gi.LiveOffsetsDir
	}
	if out.LiveOffsetsDir == "" {
		if s, ok := g.Spec(); ok {
			out.Evidence += fmt.Sprintf("; %s is unknown, so %s offsets cannot be found (pass --data-dir)", s.Live().place(), s.Label)
		}
	}
	return out.finish()
}

// ResolveGeneration detects the volume's generation and applies the first
// pin given (flag, then environment, then profile). A pin that does not
// parse is a *PinError.
func ResolveGeneration(l Layout, in ResolveInput) (GenerationInfo, error) {
	gi := DetectGeneration(l)
	p := First(in.KaasVersions())
	if p.Origin == "" {
		return gi, nil
	}
	g, err := ParseKaasVersion(p.Value)
	if err != nil {
		return gi, &PinError{From: p.From, Err: err}
	}
	if g == GenUnknown { // "auto": detection, whatever lower sources say
		return gi, nil
	}
	return gi.Pin(l, g, p.From+" "+strings.TrimSpace(p.Value)), nil
}

// PinnedGeneration is the generation the first pin given names, without a
// volume (an --assignment file, the brokers alone): ok is false when
// nothing is pinned (or "auto"); a pin that does not parse is a *PinError.
func PinnedGeneration(in ResolveInput) (GenerationInfo, bool, error) {
	p := First(in.KaasVersions())
	if p.Origin == "" {
		return GenerationInfo{}, false, nil
	}
	g, err := ParseKaasVersion(p.Value)
	if err != nil {
		return GenerationInfo{}, false, &PinError{From: p.From, Err: err}
	}
	if g == GenUnknown {
		return GenerationInfo{}, false, nil
	}
	gi := GenerationInfo{Gen: g, Source: GenSourcePinned, Evidence: "by " + p.From + " " + strings.TrimSpace(p.Value)}
	return gi.finish(), true, nil
}

// RunGeneration is the kaas generation a run assumes, decided once for
// every input: the pin (--kaas-version > KAASCTL_KAAS_VERSION > profile)
// when one is given, else what the volume says when there is one, else
// undetermined (zero Gen, source undetermined).
func RunGeneration(in ResolveInput) GenerationInfo {
	if gi, ok, _ := PinnedGeneration(in); ok {
		if in.NamesVolume() {
			if l, err := Resolve(in); err == nil {
				return l.Gen
			}
		}
		return gi
	}
	if in.NamesVolume() {
		if l, err := Resolve(in); err == nil {
			return l.Gen
		}
	}
	return GenerationInfo{Source: GenSourceUndetermined, Name: "unknown", Label: "unknown"}
}

// PinError is a --kaas-version (or its variable or profile key) that does
// not parse: a usage error.
type PinError struct {
	From string
	Err  error
}

func (e *PinError) Error() string { return e.From + ": " + e.Err.Error() }

// PinnedTo returns l with its generation pinned to g; from says by what
// ("--kaas-version 0.2.18").
func (l Layout) PinnedTo(g Generation, from string) Layout {
	l.Gen = DetectGeneration(l).Pin(l, g, from)
	return l
}
