package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/render"
)

// SandboxInfo is what the command prints at start (-o json for scripts).
type SandboxInfo struct {
	Bootstrap  string   `json:"bootstrap"`
	Brokers    []string `json:"brokers"`
	DataDir    string   `json:"dataDir"`
	ClusterDir string   `json:"clusterDir"`
	LogDir     string   `json:"logDir"`
	Control    string   `json:"control"`
	StateFile  string   `json:"stateFile"`
	Placement  string   `json:"placement"`
	Demo       bool     `json:"demo"`
	TempDir    bool     `json:"tempDir"`
	Keep       bool     `json:"keep"`
}

// SandboxStopping says on w (stderr) why the foreground sandbox stops: a
// signal, or quit on the control endpoint ('quit' typed says nothing).
func SandboxStopping(w io.Writer, why sandbox.StopReason) {
	switch why {
	case sandbox.StopCanceled:
		fmt.Fprintf(w, "kaasctl sandbox: signal received, stopping\n")
	case sandbox.StopControl:
		fmt.Fprintf(w, "kaasctl sandbox: quit requested on the control endpoint, stopping\n")
	}
}

// SandboxStopped says where the sandbox's volume is left.
func SandboxStopped(w io.Writer, info SandboxInfo) {
	switch {
	case !info.TempDir:
		fmt.Fprintf(w, "sandbox stopped; the volume is left in %s\n", info.DataDir)
	case info.Keep:
		fmt.Fprintf(w, "sandbox stopped; the volume is kept in %s (remove it with: rm -rf %s)\n", info.DataDir, render.ShellQuote(info.DataDir))
	default:
		fmt.Fprintf(w, "sandbox stopped; temporary volume %s removed (--keep keeps it)\n", info.DataDir)
	}
}

// PrintSandboxInfo is what the sandbox prints at start.
func PrintSandboxInfo(p *render.Printer, info SandboxInfo) error {
	if p.Format.Machine() {
		return p.Print(render.Output{Data: info})
	}
	w := p.Out
	fmt.Fprintf(w, "kaasctl sandbox: %d brokers running (placement %s)\n", len(info.Brokers), info.Placement)
	fmt.Fprintf(w, "  bootstrap:   %s\n", info.Bootstrap)
	if info.TempDir && !info.Keep {
		fmt.Fprintf(w, "  data dir:    %s (temporary: removed on exit unless --keep)\n", info.DataDir)
	} else if info.TempDir {
		fmt.Fprintf(w, "  data dir:    %s (temporary, kept on exit)\n", info.DataDir)
	} else {
		fmt.Fprintf(w, "  data dir:    %s\n", info.DataDir)
	}
	fmt.Fprintf(w, "  cluster dir: %s\n", info.ClusterDir)
	fmt.Fprintf(w, "  logs:        %s/kaas-N.log\n", info.LogDir)
	if info.Control != "" {
		fmt.Fprintf(w, "  control:     %s  (GET /status, POST /stop?broker=kaas-1, POST /start?broker=kaas-1, POST /quit)\n", info.Control)
	}
	fmt.Fprintf(w, "  state file:  %s\n", info.StateFile)
	if info.Demo {
		fmt.Fprintf(w, "  demo:        topics orders, payments; groups %s\n", strings.Join(sandbox.DemoGroupNames(), ", "))
		fmt.Fprintf(w, "  consumers:   type 'consumers stop orders-app' (or POST /consumers/stop?group=orders-app) to empty a group before 'kaasctl offsets reset'\n")
	}
	fmt.Fprintf(w, "try:  kaasctl whois --data-dir %s orders-app\n", render.ShellQuote(info.DataDir))
	fmt.Fprintf(w, "type: stop kaas-1 | start kaas-1 | status | groups | help | quit\n")
	return nil
}
