package hooktool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	dialTimeout = 10 * time.Second
	// callTimeout leaves the server its RequestTimeout plus room to answer.
	callTimeout = RequestTimeout + 15*time.Second
)

// RunIfTool runs the hook tool named by the program's base name, for main functions:
//
//	if code, ran := hooktool.RunIfTool(); ran { os.Exit(code) }
func RunIfTool() (code int, ran bool) {
	if len(os.Args) == 0 || !IsTool(filepath.Base(os.Args[0])) {
		return 0, false
	}
	return Main(filepath.Base(os.Args[0]), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr), true
}

// Main runs hook tool name: it sends the arguments to the unit agent named in the hook's
// environment, prints the answer and returns the exit code.
func Main(name string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	resp, err := call(name, args, getenv, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR %v\n", err)
		return 1
	}
	_, _ = stdout.Write(resp.Stdout)
	_, _ = stderr.Write(resp.Stderr)
	return resp.Code
}

func call(name string, args []string, getenv func(string) string, stdin io.Reader) (response, error) {
	addr := getenv("JUJU_AGENT_SOCKET")
	if addr == "" {
		return response{}, errors.New("JUJU_AGENT_SOCKET is not set: hook tools run only inside a hook")
	}
	id := getenv("JUJU_CONTEXT_ID")
	if id == "" {
		return response{}, errors.New("JUJU_CONTEXT_ID is not set: hook tools run only inside a hook")
	}
	req := request{ContextID: id, Tool: name, Args: args}
	if path, ok := fileArg(args); ok && fileTools[name] {
		var err error
		if req.File, err = readFile(path, stdin); err != nil {
			return response{}, fmt.Errorf("reading --file: %w", err)
		}
	}
	conn, err := net.DialTimeout("unix", addr, dialTimeout)
	if err != nil {
		return response{}, fmt.Errorf("cannot reach the unit agent: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(callTimeout))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return response{}, fmt.Errorf("sending to the unit agent: %w", err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		return response{}, fmt.Errorf("reading the unit agent's answer: %w", err)
	}
	return resp, nil
}

// fileTools take --file, which the client reads: a relative path is the hook's working directory
// and "-" the hook's stdin, neither of which the unit agent has.
var fileTools = map[string]bool{"relation-set": true, "state-set": true}

// fileArg finds the value of a --file flag (the last one wins, as in pflag).
func fileArg(args []string) (path string, ok bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return path, ok
		case a == "--file" && i+1 < len(args):
			path, ok = args[i+1], true
			i++
		case strings.HasPrefix(a, "--file="):
			path, ok = strings.TrimPrefix(a, "--file="), true
		}
	}
	return path, ok
}

// readFile reads path, or stdin for "-", within what a request may carry.
func readFile(path string, stdin io.Reader) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRequest/2+1))
	if err == nil && len(b) > maxRequest/2 {
		err = fmt.Errorf("more than %d bytes", maxRequest/2)
	}
	return b, err
}

// InstallTools links every tool name in dir to binary (jujuc or jujud), replacing stale entries.
func InstallTools(dir, binary string) error {
	binary, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("installing hook tools: %w", err)
	}
	for _, name := range Names() {
		link := filepath.Join(dir, name)
		if target, err := os.Readlink(link); err == nil && target == binary {
			continue
		}
		// Link beside it and rename over it, so a hook never finds the tool missing.
		tmp := link + ".tmp"
		_ = os.Remove(tmp)
		if err := os.Symlink(binary, tmp); err != nil {
			return fmt.Errorf("installing hook tool %s: %w", name, err)
		}
		if err := os.Rename(tmp, link); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("installing hook tool %s: %w", name, err)
		}
	}
	return nil
}
