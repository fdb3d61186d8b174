// Command juju is the command line client of the controller.
package main

import (
	"os"

	"github.com/jujuclone/juju/cmd/juju/root"
	"github.com/jujuclone/juju/output"
)

func main() {
	os.Exit(root.Main(os.Args[1:], output.System()))
}
