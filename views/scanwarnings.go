package views

import (
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// WarnUnreadFiles warns about offset files the scan did not read: links,
// FIFOs, devices (volume check reports them with their fix).
func WarnUnreadFiles(g render.Notes, sr volume.ScanResult) {
	for _, f := range sr.Findings {
		if f.Code == volume.CodeNotRegular || f.Code == volume.CodeSymlink || f.Code == volume.CodeSymlinkedDir {
			g.Warnf("%s: %s", f.Path, f.Message)
		}
	}
}

// WarnGeneration repeats on stderr the scan's findings that change what
// the offsets on the volume mean: both offsets dirs in use (generation
// ambiguous), the 0.2.18 legacy dir, files the assumed generation never reads.
func WarnGeneration(g render.Notes, sr volume.ScanResult) {
	for _, f := range sr.Findings {
		switch f.Code {
		case volume.CodeAmbiguousGeneration, volume.CodeLegacyOffsetsDir, volume.CodeOffsetsDirNotRead, volume.CodePreMigrationDir:
			g.Warnf("%s (see 'kaasctl volume check')", f.Message)
		}
	}
}
