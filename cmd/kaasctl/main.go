// Command kaasctl is the operations toolkit for kaas.
package main

import (
	"os"

	"github.com/kaasctl/kaasctl/commands"
)

func main() {
	commands.TuneRuntime()
	os.Exit(commands.Main(os.Args, commands.System()))
}
