package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// completionRuns is how many Tabs each completion figure is the median of.
const completionRuns = 30

// completionStore is a copy of the client store taken while the controller runs, so the dead
// controller's figures can be measured after kill-controller has forgotten it.
var completionStore string

// completeUnit presses Tab after "juju show-unit wordpress/1" as the shell scripts do (`juju
// __complete`), with the client store in dataDir, and returns the candidates.
func completeUnit(dataDir string) ([]string, error) {
	cmd := exec.Command(filepath.Join(bin, "juju"), "__complete", "show-unit", "-m", "big", "wordpress/1")
	cmd.Env = append(os.Environ(), "JUJU_DATA="+dataDir, "NO_COLOR=1", "JUJU_COMPLETION_TIMEOUT=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("juju __complete: %v: %s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[:len(lines)-1], nil // the last line is the directive
}

// measureCompletionLive: Tab on a unit name with the live controller and model "big" (1,000
// wordpress units), which answers 111 names. base is `juju version`, the cost of starting juju.
func measureCompletionLive(base time.Duration) error {
	d := median(completionRuns, func() error {
		names, err := completeUnit(data)
		if err == nil && len(names) != 111 {
			err = fmt.Errorf("completing wordpress/1 gave %d names, want 111", len(names))
		}
		return err
	})
	rows = append(rows, row{what: "Tab: juju __complete show-unit wordpress/1, 1,000 units (111 names)", budget: "≤ 30 ms", median: d, ratio: ratio(d, base)})

	dir, err := os.MkdirTemp(data, "completion-store-")
	if err != nil {
		return err
	}
	for _, name := range []string{"controllers.yaml", "accounts.yaml", "models.yaml"} {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	completionStore = dir
	return nil
}

var endpointsRe = regexp.MustCompile(`api-endpoints: \[[^\]]*\]`)

// measureCompletionDead: the same Tab once the controller is gone, with its endpoint refusing
// connections, and with an endpoint that accepts connections and never answers (a hung or
// firewalled controller: the deadline, not the network, ends the wait). Both must give nothing.
func measureCompletionDead() error {
	if completionStore == "" {
		return fmt.Errorf("no client store kept by measureCompletionLive")
	}
	dead := func(what string) error {
		d := median(completionRuns, func() error {
			names, err := completeUnit(completionStore)
			if err == nil && len(names) > 0 {
				err = fmt.Errorf("completing against a dead controller gave %q", names)
			}
			return err
		})
		rows = append(rows, row{what: "Tab: juju __complete show-unit wordpress/1, " + what, budget: "≤ 300 ms", median: d})
		return nil
	}
	if err := dead("controller gone (connection refused)"); err != nil {
		return err
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	path := filepath.Join(completionStore, "controllers.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = endpointsRe.ReplaceAll(b, []byte(fmt.Sprintf("api-endpoints: ['%s']", lis.Addr())))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	return dead("controller not answering (accepts, never replies)")
}
