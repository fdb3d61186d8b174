// Command jujuc is the hook tools. The unit agent links relation-get, status-set and the
// rest to it on a hook's PATH; run under one of those names it asks the unit agent over
// its socket and prints the answer.
//
// jujud answers to the same names, but every tool call is a new process, and jujud's
// package initialisation (embedded etcd, gRPC, metrics) costs about 7 ms a call against
// about 1 ms here. So jujuc links nothing but the tools' client; TestJujucStaysSmall
// keeps it that way.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/jujuclone/juju/controller/agent/hooktool"
)

func main() {
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	fmt.Fprintf(os.Stderr, "ERROR jujuc runs only as a hook tool, under one of these names: %s\n",
		strings.Join(hooktool.Names(), ", "))
	os.Exit(2)
}
