package hooktool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as a hook tool when run under a tool's name, as jujud does.
func TestMain(m *testing.M) {
	if code, ran := RunIfTool(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func (f *fakeContext) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.logs)
}

// startServer serves hook tools on a real abstract socket, with c registered as "ctx-1".
func startServer(t *testing.T, c Context) *Server {
	t.Helper()
	return startServerTimeout(t, c, RequestTimeout)
}

func startServerTimeout(t *testing.T, c Context, timeout time.Duration) *Server {
	t.Helper()
	s, err := NewServer(SocketAddr("wordpress/0"))
	if err != nil {
		t.Fatal(err)
	}
	s.timeout = timeout
	s.Register("ctx-1", c)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a tool through Main against s, as a hook with JUJU_CONTEXT_ID=ctx-1 would.
func run(s *Server, stdin string, name string, args ...string) result {
	env := map[string]string{"JUJU_AGENT_SOCKET": s.Addr(), "JUJU_CONTEXT_ID": "ctx-1"}
	var out, errOut bytes.Buffer
	code := Main(name, args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

type toolCase struct {
	name   string
	args   []string
	stdin  string
	setup  func(f *fakeContext)
	want   result
	record []string // what the Context got, when checked
}

func runCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			f := newFake()
			if tc.setup != nil {
				tc.setup(f)
			}
			s := startServer(t, f)
			got := run(s, tc.stdin, tc.name, tc.args...)
			if got != tc.want {
				t.Errorf("got\n%#v\nwant\n%#v", got, tc.want)
			}
			if tc.record != nil && !slices.Equal(f.recorded(), tc.record) {
				t.Errorf("Context got %q, want %q", f.recorded(), tc.record)
			}
		})
	}
}

func ok(stdout string) result { return result{stdout: stdout} }

func usage(name, msg, usage string) result {
	return result{stderr: "ERROR " + msg + "\nUsage: " + name + " " + usage + "\n", code: 2}
}

func failed(msg string) result { return result{stderr: "ERROR " + msg + "\n", code: 1} }

func notRelationHook(f *fakeContext) { f.relation, f.remote = "", "" }

func TestHelp(t *testing.T) {
	f := newFake()
	f.err = errors.New("the Context must not be called")
	s := startServer(t, f)
	for _, name := range Names() {
		for _, flag := range []string{"--help", "-h"} {
			got := run(s, "", name, flag)
			want := "Usage: " + name + " " + tools[name].usage + "\n\n" + tools[name].purpose + "\n"
			if got.code != 0 || got.stderr != "" || !strings.HasPrefix(got.stdout, want) || !strings.Contains(got.stdout, "-h, --help") {
				t.Errorf("%s %s: %#v", name, flag, got)
			}
		}
	}
	if len(Names()) != 28+len(unsupportedTools) || !IsTool("relation-get") || !IsTool("secret-get") || IsTool("jujud") {
		t.Errorf("Names() = %q", Names())
	}
}

func TestServerRefusesUnknownContext(t *testing.T) {
	s := startServer(t, newFake())
	env := map[string]string{"JUJU_AGENT_SOCKET": s.Addr(), "JUJU_CONTEXT_ID": "stale"}
	var out, errOut bytes.Buffer
	code := Main("relation-get", nil, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	want := "ERROR no running hook has context id \"stale\": hook tools work only while their hook runs\n"
	if code != 1 || out.String() != "" || errOut.String() != want {
		t.Errorf("got %d %q %q", code, out.String(), errOut.String())
	}

	// A finished hook's id stops working.
	s.Unregister("ctx-1")
	if got := run(s, "", "is-leader"); got.code != 1 || !strings.Contains(got.stderr, `context id "ctx-1"`) {
		t.Errorf("after Unregister: %#v", got)
	}
}

func TestMainOutsideHook(t *testing.T) {
	s := startServer(t, newFake())
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "ERROR JUJU_AGENT_SOCKET is not set: hook tools run only inside a hook\n"},
		{map[string]string{"JUJU_AGENT_SOCKET": s.Addr()}, "ERROR JUJU_CONTEXT_ID is not set: hook tools run only inside a hook\n"},
	} {
		var out, errOut bytes.Buffer
		code := Main("is-leader", nil, func(k string) string { return tc.env[k] }, strings.NewReader(""), &out, &errOut)
		if code != 1 || errOut.String() != tc.want {
			t.Errorf("got %d %q, want %q", code, errOut.String(), tc.want)
		}
	}
	env := map[string]string{"JUJU_AGENT_SOCKET": "@jujud-nobody-listens", "JUJU_CONTEXT_ID": "x"}
	var errOut bytes.Buffer
	code := Main("is-leader", nil, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &errOut)
	if code != 1 || !strings.HasPrefix(errOut.String(), "ERROR cannot reach the unit agent: ") {
		t.Errorf("no server: %d %q", code, errOut.String())
	}
}

// A Context call that hangs ends at the server's deadline with an error, not a hung hook.
func TestServerDeadline(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	s := startServerTimeout(t, f, 200*time.Millisecond)
	start := time.Now()
	got := run(s, "", "is-leader")
	if got != failed("context deadline exceeded") || time.Since(start) > 5*time.Second {
		t.Errorf("got %#v after %v", got, time.Since(start))
	}
}

func TestServerConcurrent(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	s := startServer(t, f)
	const n = 20
	results := make(chan result, n)
	for i := range n {
		go func() { results <- run(s, "", "juju-log", fmt.Sprint("message ", i)) }()
	}
	// All n calls are in flight at once before any is let through.
	for deadline := time.Now().Add(10 * time.Second); f.waiting.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d calls in flight", f.waiting.Load(), n)
		}
	}
	close(f.block)
	for range n {
		if got := <-results; got != ok("") {
			t.Errorf("got %#v", got)
		}
	}
	if len(f.recorded()) != n {
		t.Errorf("recorded %d calls", len(f.recorded()))
	}
}

func TestServerServeEndsWithContext(t *testing.T) {
	s, err := NewServer(filepath.Join(t.TempDir(), "agent.socket"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	s.Register("ctx-1", newFake())
	if got := run(s, "", "unit-get", "private-address"); got != ok("10.0.0.1\n") {
		t.Errorf("path socket: %#v", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSocketAddr(t *testing.T) {
	a, b := SocketAddr("wordpress/0"), SocketAddr("wordpress/0")
	if a == b || !strings.HasPrefix(a, "@jujud-wordpress-0-") {
		t.Errorf("SocketAddr: %q %q", a, b)
	}
	if long := SocketAddr(strings.Repeat("x", 300) + "/0"); len(long) > 107 {
		t.Errorf("address of %d bytes", len(long))
	}
	if NewContextID() == NewContextID() || len(NewContextID()) != 32 {
		t.Error("context ids repeat or are short")
	}
}

func TestInstallTools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(dir, "/bin/old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "juju-log"), []byte("stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // replaces stale entries, then changes nothing
		if err := InstallTools(dir, "/usr/bin/jujud"); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || target != "/usr/bin/jujud" {
			t.Errorf("%s -> %q, %v", e.Name(), target, err)
		}
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("installed %q", names)
	}
}

// The tools run as real processes through real symlinks: this test binary acts as jujud (TestMain).
func TestToolsThroughSymlinks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testThroughSymlinks(t, exe)
}

// The same with jujud itself, checking that its main runs the tools.
func TestJujudRunsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jujud")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	jujud := filepath.Join(t.TempDir(), "jujud")
	if out, err := exec.Command(goTool, "build", "-o", jujud, "github.com/jujuclone/juju/cmd/jujud").CombinedOutput(); err != nil {
		t.Fatalf("building jujud: %v\n%s", err, out)
	}
	testThroughSymlinks(t, jujud)
}

func testThroughSymlinks(t *testing.T, binary string) {
	f := newFake()
	s := startServer(t, f)
	toolsDir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(toolsDir, binary); err != nil {
		t.Fatal(err)
	}
	hookDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hookDir, "settings.yaml"), []byte("from-file: yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exec1 := func(stdin, id, name string, args ...string) result {
		cmd := exec.Command(filepath.Join(toolsDir, name), args...)
		cmd.Dir = hookDir
		cmd.Env = []string{"JUJU_AGENT_SOCKET=" + s.Addr(), "JUJU_CONTEXT_ID=" + id}
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running %s: %v", name, err)
		}
		return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
	}
	for _, tc := range []struct {
		stdin, id, name string
		args            []string
		want            result
	}{
		{"", "ctx-1", "relation-get", []string{"host"}, ok("10.0.0.2\n")},
		{"", "ctx-1", "is-leader", nil, ok("True\n")},
		{"", "ctx-1", "status-set", []string{"bogus"}, usage("status-set", `invalid status "bogus", expected one of [maintenance blocked waiting active]`, tools["status-set"].usage)},
		{"k: v\n", "ctx-1", "relation-set", []string{"--file", "-"}, ok("")},
		{"", "ctx-1", "relation-set", []string{"--file", "settings.yaml"}, ok("")},
		{"", "ctx-1", "relation-set", []string{"--file", "missing.yaml"}, result{stderr: "ERROR reading --file: open missing.yaml: no such file or directory\n", code: 1}},
		{"\"k\": |\n  {a: 1}\n", "ctx-1", "state-set", []string{"--file", "-"}, ok("")},
		{"", "ctx-1", "state-set", []string{"--file=settings.yaml"}, ok("")},
		{"", "ctx-1", "state-get", []string{"k"}, ok("{a: 1}\n\n")},
		{"", "ctx-1", "status-get", []string{"--include-data", "--application=False", "--format=json"}, ok(`{"message":"ready","status":"active","status-data":{}}` + "\n")},
		{"", "ctx-1", "secret-get", []string{"secret:123"}, failed("secret-get is not supported by this controller (secrets are not supported)")},
		{"", "gone", "is-leader", nil, failed(`no running hook has context id "gone": hook tools work only while their hook runs`)},
	} {
		if got := exec1(tc.stdin, tc.id, tc.name, tc.args...); got != tc.want {
			t.Errorf("%s %q: got %#v, want %#v", tc.name, tc.args, got, tc.want)
		}
	}
	want := []string{"relation-set db:3 app=false map[k:v]", "relation-set db:3 app=false map[from-file:yes]",
		"state-set map[k:{a: 1}\n]", "state-set map[from-file:yes]"}
	if got := f.recorded(); !slices.Equal(got, want) {
		t.Errorf("Context got %q, want %q", got, want)
	}
}

// No input makes a tool panic, also against a Context that returns nothing at all.
func TestToolsNeverPanic(t *testing.T) {
	odd := [][]string{nil, {""}, {"-"}, {"--"}, {"="}, {"=", "="}, {"-r"}, {"-r", ""}, {"-r", ":"}, {"-r", "db:"},
		{"-r", "-1"}, {"--format"}, {"--format", ""}, {"--file"}, {"--file", "-"}, {"-l", ""}, {"/"}, {"-/tcp"},
		{"1-"}, {"-1"}, {"80/"}, {"9999999999999999999999"}, {"--all", ""}, {"\x00"}, {"a=b", "c"}}
	empty := &fakeContext{settings: map[string]map[string]map[string]string{}}
	for _, name := range Names() {
		for _, args := range odd {
			for _, c := range []*fakeContext{newFake(), empty} {
				_, stderr, code := runTool(context.Background(), c, name, args, []byte("{not yaml"))
				if code < 0 || code > 2 || (code != 0) != (len(stderr) > 0) {
					t.Errorf("%s %q: code %d, stderr %q", name, args, code, stderr)
				}
			}
		}
	}
	if _, stderr, code := runTool(context.Background(), newFake(), "jujud", nil, nil); code != 1 || string(stderr) != "ERROR unknown hook tool \"jujud\"\n" {
		t.Errorf("unknown tool: %d %q", code, stderr)
	}
}

type panickingContext struct{ *fakeContext }

func (panickingContext) IsLeader(context.Context) (bool, error) { panic("boom") }

// A broken request or a panicking Context gets an error answer; the server keeps serving.
func TestServerSurvivesBadCalls(t *testing.T) {
	s := startServer(t, panickingContext{newFake()})
	if got := run(s, "", "is-leader"); got != failed("internal error in the unit agent: boom") {
		t.Errorf("panic: %#v", got)
	}
	conn, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("not json\n")); err != nil {
		t.Fatal(err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil || resp.Code != 1 ||
		!strings.HasPrefix(string(resp.Stderr), "ERROR reading the hook tool's request: ") {
		t.Errorf("garbage: %#v, %v", resp, err)
	}
	if got := run(s, "", "unit-get", "private-address"); got != ok("10.0.0.1\n") {
		t.Errorf("after bad calls: %#v", got)
	}
}
