package completion

import "embed"

//go:embed scripts
var scripts embed.FS

// Scripts are the completion scripts by shell (bash, zsh, fish): each
// asks 'kaasctl __complete --shell=SH WORD...' for the candidates.
var Scripts = func() map[string]string {
	out := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		b, err := scripts.ReadFile("scripts/" + sh)
		if err != nil {
			panic(err)
		}
		out[sh] = string(b)
	}
	return out
}()
