package root

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
)

// The scripting contract, through the real CLI (root.Main) and a real controller (daemon.Run in
// this process: embedded etcd, TLS gRPC, provisioner and agents): under --format json a command
// writes exactly one JSON document to stdout and nothing else, every other command writes to
// stdout only what docs/scripting.md says, and bad input is a usage error (exit 2, one ERROR
// line, nothing on stdout) found before anything is sent to the controller.

// stdoutCheck says whether a command's stdout is what the contract allows.
type stdoutCheck func(stdout string) error

// oneJSON: exactly one JSON document, on one line, and nothing else.
func oneJSON(stdout string) error {
	dec := json.NewDecoder(strings.NewReader(stdout))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("stdout is not a JSON document: %v", err)
	}
	if rest := stdout[dec.InputOffset():]; rest != "\n" {
		return fmt.Errorf("stdout has %q after its JSON document (want one newline)", rest)
	}
	return nil
}

// oneYAML: exactly one YAML document.
func oneYAML(stdout string) error {
	dec := yaml.NewDecoder(strings.NewReader(stdout))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("stdout is not a YAML document: %v", err)
	}
	if v == nil {
		return errors.New("stdout is an empty YAML document")
	}
	if err := dec.Decode(&v); !errors.Is(err, io.EOF) {
		return fmt.Errorf("stdout holds more than one YAML document (%v)", err)
	}
	return nil
}

// someText: human output (a table, a script), which must at least end its last line.
func someText(stdout string) error {
	if strings.TrimSpace(stdout) == "" || !strings.HasSuffix(stdout, "\n") {
		return fmt.Errorf("want text lines on stdout, got %q", stdout)
	}
	return nil
}

func noStdout(stdout string) error {
	if stdout != "" {
		return fmt.Errorf("want nothing on stdout, got %q", stdout)
	}
	return nil
}

func exactly(want string) stdoutCheck {
	return func(stdout string) error {
		if stdout != want {
			return fmt.Errorf("stdout = %q, want %q", stdout, want)
		}
		return nil
	}
}

// everyLine: at least one line, each matching re.
func everyLine(re string) stdoutCheck {
	rx := regexp.MustCompile(re)
	return func(stdout string) error {
		if stdout == "" || !strings.HasSuffix(stdout, "\n") {
			return fmt.Errorf("want lines matching %s, got %q", re, stdout)
		}
		for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			if !rx.MatchString(line) {
				return fmt.Errorf("stdout line %q does not match %s", line, re)
			}
		}
		return nil
	}
}

// everyLineOrEmpty: like everyLine, but a single empty line passes when re allows it.
func everyLineOrEmpty(re string) stdoutCheck {
	rx := regexp.MustCompile(re)
	return func(stdout string) error {
		if stdout == "\n" && rx.MatchString("") {
			return nil
		}
		return everyLine(re)(stdout)
	}
}

// formatCheck is what stdout must be under --format f.
func formatCheck(f string) stdoutCheck {
	switch f {
	case "json":
		return oneJSON
	case "yaml":
		return oneYAML
	case "constraints":
		// Juju's constraints line: "cores=2 mem=1024M", or an empty line when none are set.
		return everyLineOrEmpty(`^(\S+=\S*( \S+=\S*)*)?$`)
	}
	return someText
}

// contractRow is one step of the contract run: juju <args>, in order, against the shared model.
type contractRow struct {
	args []string
	// formats runs the command once per value its --format accepts (json: one JSON document,
	// yaml: one YAML document, any other: text), and with -o <file> when it has it.
	formats bool
	// stdout checks a run without --format.
	stdout stdoutCheck
	// code is the exit code wanted (stdout must then be empty unless it is 0).
	code int
}

// contractRows drives every command of the tree, in an order that builds and then dismantles a
// small model: two hookless charms, db and web, related. A command missing here fails
// TestContractEveryCommand: add its row (with formats: true if it takes --format).
func contractRows(charms string) []contractRow {
	idle := func(unit string) contractRow {
		return contractRow{args: []string{"wait-for", "unit", unit, "--query", `agent-status=="idle"`, "--timeout", "60s"}, stdout: noStdout}
	}
	return []contractRow{
		{args: []string{"version"}, stdout: everyLine(`^3\.6\.\d+-[^-\s]+-[^-\s]+$`)},
		{args: []string{"version", "--all"}, formats: true},
		{args: []string{"controllers"}, formats: true},
		{args: []string{"controllers", "--refresh"}, formats: true},
		{args: []string{"show-controller"}, formats: true},
		{args: []string{"show-controller", "local", "--show-password"}, formats: true},
		{args: []string{"show-controller", "nope", "--format", "json"}, code: 1},
		// One member asked for, one member kept: nothing is started.
		{args: []string{"enable-ha", "-n", "1"}, formats: true},
		{args: []string{"remove-controller-member", "9"}, code: 1}, // no terminal to confirm on: --no-prompt is required
		{args: []string{"remove-controller-member", "9", "--no-prompt"}, code: 1},
		{args: []string{"switch"}, stdout: exactly("local:admin/default\n")},
		{args: []string{"whoami"}, formats: true},
		{args: []string{"add-model", "scratch"}, stdout: noStdout},
		{args: []string{"models"}, formats: true},
		{args: []string{"show-model"}, formats: true},
		{args: []string{"show-model", "local:admin/scratch"}, formats: true},
		{args: []string{"show-model", "nope", "--format", "json"}, code: 1},
		{args: []string{"model-config", "-m", "scratch", "update-status-hook-interval=1m", "automatically-retry-hooks=true"}, stdout: noStdout},
		{args: []string{"model-config", "-m", "scratch"}, formats: true},
		{args: []string{"model-config", "-m", "scratch", "update-status-hook-interval"}, stdout: exactly("1m\n")},
		{args: []string{"model-config", "-m", "scratch", "--reset", "update-status-hook-interval,automatically-retry-hooks"}, stdout: noStdout},
		{args: []string{"model-config", "-m", "scratch", "nope", "--format", "json"}, code: 1},
		{args: []string{"model-defaults", "extra-info=contract"}, stdout: noStdout},
		{args: []string{"model-defaults"}, formats: true},
		{args: []string{"model-defaults", "extra-info", "--format", "json"}, stdout: exactly(`{"extra-info":{"default":"","controller":"contract"}}` + "\n")},
		{args: []string{"model-defaults", "--reset", "extra-info"}, stdout: noStdout},
		{args: []string{"switch", "default"}, stdout: noStdout},
		{args: []string{"deploy", filepath.Join(charms, "db")}, stdout: noStdout},
		{args: []string{"deploy", filepath.Join(charms, "web"), "--wait", "--timeout", "60s"}, stdout: noStdout},
		{args: []string{"add-unit", "db", "--wait", "--timeout", "60s"}, stdout: noStdout},
		{args: []string{"add-machine"}, stdout: noStdout},
		{args: []string{"integrate", "web", "db"}, stdout: noStdout},
		idle("db/0"), idle("db/1"), idle("web/0"),
		{args: []string{"wait-for", "model", "default", "--query", `forEach(units, u => u.agent-status=="idle")`, "--timeout", "60s"}, stdout: noStdout},
		// Failures: exit 1, nothing on stdout whatever the format.
		{args: []string{"wait-for", "unit", "db/0", "--query", `agent-status=="error"`, "--timeout", "100ms"}, code: 1},
		{args: []string{"show-unit", "nope/0", "--format", "json"}, code: 1},
		{args: []string{"show-application", "nope", "--format", "json"}, code: 1},
		{args: []string{"show-machine", "42", "--format", "json"}, code: 1},
		{args: []string{"constraints", "nope", "--format", "json"}, code: 1},
		{args: []string{"config", "nope", "--format", "json"}, code: 1},
		{args: []string{"status"}, formats: true},
		{args: []string{"status", "db", "web/0"}, formats: true},
		{args: []string{"status", "nope", "--format", "json"}, stdout: oneJSON}, // matches nothing: still a document
		{args: []string{"machines"}, formats: true},
		{args: []string{"show-machine"}, formats: true},
		{args: []string{"show-machine", "0"}, formats: true},
		{args: []string{"show-unit", "web/0", "db/0"}, formats: true},
		{args: []string{"show-application", "db", "web"}, formats: true},
		// Actions and exec (operation 1 is the first run, its task 2).
		{args: []string{"actions", "db"}, formats: true},
		{args: []string{"show-action", "db", "get-port"}, stdout: someText},
		{args: []string{"run", "db/0", "get-port"}, formats: true},
		{args: []string{"run", "db/leader", "get-port", "--background"}, stdout: noStdout},
		{args: []string{"run", "db/0", "nope"}, code: 1},
		{args: []string{"run", "db/0", "get-port", "verbose=loud"}, code: 1}, // a string where the schema wants a boolean
		{args: []string{"run", "db/9", "get-port"}, code: 1},
		{args: []string{"exec", "--unit", "db/0", "echo", "hello"}, formats: true}, // no "--": the rows append --format
		{args: []string{"exec", "--machine", "0", "--", "true"}, stdout: noStdout},
		{args: []string{"exec", "--unit", "db/0", "--", "exit", "3"}, code: 1}, // the task fails; plain prints its (empty) output
		{args: []string{"show-task", "2"}, formats: true},
		{args: []string{"show-operation", "1"}, formats: true},
		{args: []string{"operations"}, formats: true},
		{args: []string{"cancel-task", "2"}, formats: true},
		{args: []string{"model-constraints"}, formats: true},
		{args: []string{"constraints", "db"}, formats: true},
		{args: []string{"config", "db"}, formats: true},
		{args: []string{"config", "db", "port"}, stdout: exactly("3306\n")},
		{args: []string{"config", "db", "port", "--format", "json"}, stdout: exactly("3306\n")},
		{args: []string{"config", "db", "port=3307"}, stdout: noStdout},
		{args: []string{"trust", "db", "--scope", "cluster"}, stdout: noStdout},
		{args: []string{"config", "db", "trust"}, stdout: exactly("true\n")},
		{args: []string{"trust", "db", "--remove"}, stdout: noStdout},
		{args: []string{"expose", "db"}, stdout: noStdout},
		{args: []string{"expose", "db", "--endpoints", "db", "--to-cidrs", "10.0.0.0/8"}, stdout: noStdout},
		{args: []string{"expose", "db", "--endpoints", "nope"}, code: 1},
		{args: []string{"unexpose", "db", "--endpoints", "db"}, stdout: noStdout},
		{args: []string{"unexpose", "db"}, stdout: noStdout},
		{args: []string{"attach-resource", "db", "data=" + filepath.Join(charms, "db", "config.yaml")}, stdout: noStdout},
		{args: []string{"attach-resource", "db", "nope=" + filepath.Join(charms, "db", "config.yaml")}, code: 1},
		{args: []string{"resources", "db"}, formats: true},
		{args: []string{"resources", "db/0", "--details"}, formats: true},
		{args: []string{"export-bundle"}, stdout: someText},
		{args: []string{"export-bundle", "-m", "scratch"}, code: 1},
		// Real OpenSSH against the machine's sshd; the model's keys as the agents serve them.
		{args: []string{"ssh", "db/0", "echo", "hi"}, stdout: exactly("hi\n")},
		{args: []string{"scp", filepath.Join(charms, "db", "metadata.yaml"), "db/0:" + filepath.Join(charms, "copied.yaml")}, stdout: noStdout},
		{args: []string{"add-ssh-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU me@host"}, stdout: noStdout},
		{args: []string{"ssh-keys"}, stdout: exactly("Keys used in model: admin/default\n28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31 (me@host)\n")},
		{args: []string{"remove-ssh-key", "me@host"}, stdout: noStdout},
		{args: []string{"remove-ssh-key", "me@host"}, code: 1},
		{args: []string{"refresh", "db", "--path", filepath.Join(charms, "db")}, stdout: noStdout},
		{args: []string{"debug-log", "--replay", "--no-tail"}, stdout: everyLine(`^\S+: \d\d:\d\d:\d\d [A-Z]+ \S+ `)},
		{args: []string{"debug-log", "--limit", "2"}, stdout: everyLine(`^\S+: \d\d:\d\d:\d\d [A-Z]+ \S+ `)},
		{args: []string{"resolved", "--all"}, stdout: noStdout},
		{args: []string{"retry-provisioning", "3"}, code: 1},
		{args: []string{"set-constraints", "db", "mem=1G"}, stdout: noStdout},
		{args: []string{"set-model-constraints", "cores=1"}, stdout: noStdout},
		{args: []string{"remove-relation", "web", "db", "--wait", "--timeout", "60s"}, stdout: noStdout},
		{args: []string{"remove-unit", "db/1"}, code: 1}, // no terminal to confirm on: --no-prompt is required
		{args: []string{"remove-unit", "db/1", "--dry-run"}, stdout: exactly("will remove unit db/1\n")},
		{args: []string{"remove-unit", "db/1", "--no-prompt", "--wait", "--timeout", "60s"}, stdout: exactly("will remove unit db/1\n")},
		{args: []string{"remove-application", "web", "--no-prompt", "--wait", "--timeout", "60s"}, stdout: everyLine(`^(will remove application web|- will remove unit web/0)$`)},
		{args: []string{"remove-machine", "3", "--no-prompt"}, stdout: exactly("will remove machine 3\n")},
		{args: []string{"destroy-model", "scratch", "--dry-run"}, stdout: everyLine(`^ +- .+$`)},
		{args: []string{"destroy-model", "scratch"}, code: 1}, // no terminal to confirm on: --no-prompt is required
		{args: []string{"destroy-model", "scratch", "--no-prompt", "--destroy-storage", "--timeout", "60s"}, stdout: noStdout},
		{args: []string{"completion", "bash"}, stdout: someText},
		{args: []string{"completion", "zsh"}, stdout: someText},
		{args: []string{"completion", "fish"}, stdout: someText},
		// Last: bootstrap makes "spare" (a stand-in jujud, see fakejujud_test.go) current.
		{args: []string{"bootstrap", "localhost", "spare"}, stdout: noStdout},
		{args: []string{"kill-controller", "spare"}, code: 1}, // no terminal to confirm on: --no-prompt is required
		{args: []string{"kill-controller", "spare", "--no-prompt"}, stdout: noStdout},
		{args: []string{"bootstrap", "localhost", "spare2", "--no-switch"}, stdout: noStdout},
		{args: []string{"destroy-controller", "spare2"}, code: 1}, // no terminal to confirm on: --no-prompt is required
		{args: []string{"destroy-controller", "spare2", "--no-prompt", "--destroy-all-models"}, stdout: noStdout},
	}
}

// rowCommand is the command of the tree a row runs: the longest prefix of its arguments that
// names one ("completion bash" before "completion").
func rowCommand(args []string, commands map[string]liveCommand) (liveCommand, bool) {
	for n := len(args); n > 0; n-- {
		if c, ok := commands[strings.Join(args[:n], " ")]; ok {
			return c, true
		}
	}
	return liveCommand{}, false
}

// TestContractEveryCommand fails when a command of the tree has no row in contractRows, or
// takes --format but has no row that runs each of its formats.
func TestContractEveryCommand(t *testing.T) {
	commands := map[string]liveCommand{}
	for _, c := range liveCommands(t) {
		commands[c.Name] = c
	}
	ran, formatsRan := map[string]bool{}, map[string]bool{}
	for _, row := range contractRows(t.TempDir()) {
		c, ok := rowCommand(row.args, commands)
		if !ok {
			t.Errorf("contractRows runs juju %s, which is not a command of the tree", strings.Join(row.args, " "))
			continue
		}
		ran[c.Name] = true
		if row.formats {
			if c.Formats == nil {
				t.Errorf("contractRows runs juju %s with formats, but it has no --format", c.Name)
			}
			formatsRan[c.Name] = true
		} else if row.stdout == nil && row.code == 0 {
			t.Errorf("contractRows runs juju %s without saying what its stdout must be", strings.Join(row.args, " "))
		}
	}
	for name, c := range commands {
		switch {
		case !ran[name]:
			t.Errorf("juju %s has no row in contractRows (contract_e2e_test.go): add one that runs it against the shared model", name)
		case c.Formats != nil && !formatsRan[name]:
			t.Errorf("juju %s takes --format %s but no row in contractRows runs its formats (formats: true)", name, strings.Join(c.Formats, "|"))
		}
	}
}

// writeContractCharms writes two hookless charms: db provides "db" (interface mysql) and has a
// port option; web requires it.
func writeContractCharms(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"db/metadata.yaml":    "name: db\nsummary: A database\ndescription: A database.\nprovides:\n  db:\n    interface: mysql\nresources:\n  data:\n    type: file\n    filename: data.txt\n",
		"db/manifest.yaml":    "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n",
		"db/config.yaml":      "options:\n  port:\n    type: int\n    default: 3306\n    description: Port to listen on\n",
		"db/actions.yaml":     "get-port:\n  description: Report the port.\n  params:\n    verbose:\n      type: boolean\n      description: Log more\n",
		"db/actions/get-port": "#!/bin/sh\naction-log \"reading the port\"\naction-set port=\"$(config-get port)\"\n",
		"web/metadata.yaml":   "name: web\nsummary: A web site\ndescription: A web site.\nrequires:\n  db:\n    interface: mysql\n",
		"web/manifest.yaml":   "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(rel, "/actions/") {
			mode = 0o755 // an action is an executable
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	// juju scp copies into it as the machine's uid when the controller runs as root.
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(d, fi.Mode().Perm()|0o001)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// putFakeJujudOnPath makes "juju bootstrap" start this test binary as its jujud (TestMain).
func putFakeJujudOnPath(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "jujud")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestContractStdout runs every row of contractRows against a real controller and checks exit
// codes and stdout; stderr may say anything but a panic.
func TestContractStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller")
	}
	cmdtest.StartController(t).UseStore(t)
	putFakeJujudOnPath(t)
	t.Cleanup(func() {
		_, _, _ = jujuCLI(t, "kill-controller", "spare", "--no-prompt")
		_, _, _ = jujuCLI(t, "kill-controller", "spare2", "--no-prompt")
	})
	charms := writeContractCharms(t)
	commands := map[string]liveCommand{}
	for _, c := range liveCommands(t) {
		commands[c.Name] = c
	}
	outDir := t.TempDir()

	check := func(args []string, wantCode int, want stdoutCheck) bool {
		t.Helper()
		code, stdout, stderr := jujuCLI(t, args...)
		var problems []string
		if code != wantCode {
			problems = append(problems, fmt.Sprintf("exit code %d, want %d", code, wantCode))
		}
		if code != 0 {
			want = noStdout
		}
		if err := want(stdout); err != nil {
			problems = append(problems, err.Error())
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			problems = append(problems, "a panic on stderr")
		}
		if len(problems) > 0 {
			t.Errorf("juju %s: %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), strings.Join(problems, "; "), stdout, stderr)
			return false
		}
		return true
	}
	for _, row := range contractRows(charms) {
		c, ok := rowCommand(row.args, commands)
		if !ok {
			t.Errorf("juju %s: not a command of the tree", strings.Join(row.args, " "))
			continue
		}
		if !row.formats {
			want := row.stdout
			if want == nil {
				want = noStdout
			}
			if !check(row.args, row.code, want) && c.Name == "wait-for" {
				t.Fatalf("the model did not settle; the rows after this one need it")
			}
			continue
		}
		for _, f := range c.Formats {
			check(append(slices.Clone(row.args), "--format", f), row.code, formatCheck(f))
		}
		// -o writes the document to the file and nothing to stdout.
		if c.Cmd.Flags().Lookup("output") != nil && slices.Contains(c.Formats, "json") {
			file := filepath.Join(outDir, strings.NewReplacer("/", "-", " ", "_").Replace(strings.Join(row.args, " "))+".json")
			if check(append(slices.Clone(row.args), "--format", "json", "-o", file), row.code, noStdout) && row.code == 0 {
				data, err := os.ReadFile(file)
				if err == nil {
					err = oneJSON(string(data))
				}
				if err != nil {
					t.Errorf("juju %s --format json -o %s: %v", strings.Join(row.args, " "), file, err)
				}
			}
		}
	}
}

// refusingController listens where the store says the controller is and counts the connections
// it gets, closing each at once: a usage error must not make any.
func refusingController(t *testing.T) (addr string, dials *atomic.Int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	dials = &atomic.Int32{}
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			conn.Close()
		}
	}()
	return lis.Addr().String(), dials
}

// usageErrorRe is what a usage error prints on stderr: one ERROR line, and for an unknown
// command Juju's "Did you mean" block.
var usageErrorRe = regexp.MustCompile(`^ERROR [^\n]+\n(\nDid you mean:\n(\t[^\n]+\n)+)?$`)

// TestContractUsageErrors runs bad input against a store whose controller only counts
// connections: each must exit 2 with one ERROR line and nothing on stdout, without connecting.
// Besides the listed cases, every command of the tree gets an unknown flag, and every command
// with --format a bad format.
func TestContractUsageErrors(t *testing.T) {
	addr, dials := refusingController(t)
	// A CA the client accepts, so that it would really dial (and be counted) if it tried.
	caPEM, _, err := fakeCertificates()
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "juju")
	t.Setenv("JUJU_DATA", data)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	store := cmdutil.NewStore(data)
	for _, err := range []error{
		store.AddController("local", cmdutil.ControllerDetails{UUID: "uuid", APIEndpoints: []string{addr}, CACert: string(caPEM), Cloud: "localhost"}),
		store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "pw"}),
		store.SetModels("local", map[string]cmdutil.ModelDetails{"default": {UUID: "uuid-default", Type: "iaas"}}),
		store.SetCurrentController("local"),
		store.SetCurrentModel("local", "default"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	type usageCase struct {
		args []string
		// stderr, when set, is the exact error line (without "ERROR ") wanted.
		stderr string
	}
	cases := []usageCase{
		{args: []string{"stauts"}},
		{args: []string{"frobnicate"}, stderr: `juju: "frobnicate" is not a juju command. See "juju --help".`},
		{args: []string{"status", "--format", "xml"}, stderr: `invalid value "xml" for --format: expected one of ` +
			strings.Join(formatsOfCommand(t, "status"), ", ")},
		{args: []string{"status", "mysql/x"}},
		{args: []string{"status", "--color", "--no-color"}, stderr: "cannot mix --no-color and --color"},
		{args: []string{"status", "--no-color", "--color"}, stderr: "cannot mix --no-color and --color"},
		{args: []string{"machines", "--color", "--no-color"}, stderr: "cannot mix --no-color and --color"},
		{args: []string{"deploy"}, stderr: "no charm or bundle specified"},
		{args: []string{"add-unit", "mysql", "-n", "x"}},
		{args: []string{"add-unit", "mysql", "--to"}, stderr: "option needs an argument: --to"},
		{args: []string{"remove-unit", "mysql/0", "--no-wait"}, stderr: "--no-wait without --force not valid"},
		{args: []string{"set-constraints", "mysql", "foo=bar"}, stderr: `unknown constraint "foo"`},
		{args: []string{"add-machine", "--base", "ubuntu"}},
		{args: []string{"show-unit", "mysql"}, stderr: "unit name mysql not valid"},
		{args: []string{"wait-for", "unit", "mysql/0", "--query", "life=dead"}},
		{args: []string{"debug-log", "--limit", "5", "--tail"}, stderr: "setting --tail and --limit not valid"},
		{args: []string{"trust", "db", "--scope", "model"}, stderr: `scope "model" not valid`},
		{args: []string{"resources"}, stderr: "missing application or unit name"},
		{args: []string{"attach-resource", "db"}, stderr: "no resource specified"},
		{args: []string{"attach-resource", "db", "data"}, stderr: `bad resource arg "data": expected name=path format`},
		{args: []string{"deploy", "./db", "--resource", "data"}},
		{args: []string{"export-bundle", "x"}, stderr: `unrecognized args: ["x"]`},
		{args: []string{"wait-for", "model", "default", "--query", `forEach(units, u => u.status=="active")`}},
		{args: []string{"models", "extra"}, stderr: `unrecognized args: ["extra"]`},
		{args: []string{"destroy-model", "test", "--no-wait"}, stderr: "--no-wait without --force not valid"},
		{args: []string{"status", "--quiet", "--verbose"}},
		{args: []string{"config", "db", "a", "b"}},
		{args: []string{"config", "db", "a=1", "b"}},
		{args: []string{"debug-log", "--level", "foo"}},
		{args: []string{"debug-log", "--replay", "-n", "3"}},
		{args: []string{"wait-for", "foo", "x"}},
		{args: []string{"wait-for", "unit", "db/0", "--timeout", "0"}},
		{args: []string{"show-machine", "x"}},
		{args: []string{"resolved"}},
		{args: []string{"resolved", "--all", "db/0"}},
		{args: []string{"resolved", "0", "--constraints", "foo"}},
		{args: []string{"retry-provisioning", "x"}},
		{args: []string{"integrate", "a"}},
		{args: []string{"remove-relation", "x"}},
		{args: []string{"switch", "a", "b"}},
		{args: []string{"add-model", "Bad"}},
		{args: []string{"constraints", "Bad"}},
		{args: []string{"model-constraints", "x"}},
		{args: []string{"set-model-constraints", "foo"}},
		{args: []string{"show-application", "Bad"}},
		{args: []string{"kill-controller"}},
		{args: []string{"destroy-controller"}, stderr: "no controller specified"},
		{args: []string{"destroy-controller", "x", "--destroy-storage", "--release-storage"}, stderr: "--destroy-storage and --release-storage cannot both be specified"},
		{args: []string{"destroy-model", "x", "--destroy-storage", "--release-storage"}, stderr: "--destroy-storage and --release-storage cannot both be specified"},
		{args: []string{"model-config", "nope=1"}, stderr: `key "nope" is not defined in the current model configuration: possible misspelling`},
		{args: []string{"model-config", "update-status-hook-interval=soon"}},
		{args: []string{"model-config", "a", "b"}, stderr: "cannot specify multiple keys to get"},
		{args: []string{"model-config", "--reset", "agent-version"}, stderr: `"agent-version" cannot be reset`},
		{args: []string{"status", "--retry-count", "-1"}},
		{args: []string{"status", "--retry-delay", "-1s"}},
		{args: []string{"model-defaults", "nope=1"}, stderr: `key "nope" is not defined in the current model configuration: possible misspelling`},
		{args: []string{"model-defaults", "automatically-retry-hooks=maybe"}},
		{args: []string{"bootstrap", "--model-default", "automatically-retry-hooks=maybe"}},
		{args: []string{"add-model", "x", "--config", "automatically-retry-hooks=maybe"}},
		{args: []string{"show-model", "a", "b"}, stderr: `unrecognized args: ["b"]`},
		{args: []string{"version", "--format", "tabular"}},
		{args: []string{"bootstrap", "aws"}},
		{args: []string{"bootstrap", "localhost", "Bad_Name"}, stderr: `controller-name value must be a valid controller name (lowercase or digit with non-leading hyphen), got "Bad_Name"`},
		{args: []string{"destroy-model"}},
		{args: []string{"whoami", "x"}},
		{args: []string{"remove-machine", "x"}},
		{args: []string{"remove-unit", "db"}},
		{args: []string{"add-unit", "db", "--to", ",,"}},
		{args: []string{"add-machine", "-n", "0"}},
		{args: []string{"add-machine", "ssh:ubuntu@10.0.0.1"}, stderr: `manual provisioning ("ssh:ubuntu@10.0.0.1") is not supported by the local provider: add a machine with "juju add-machine"`},
		{args: []string{"completion"}},
		{args: []string{"completion", "powershell"}},
		{args: []string{"run"}, stderr: "no unit specified"},
		{args: []string{"run", "db/0"}, stderr: "no action specified"},
		{args: []string{"run", "db/0", "Bad"}, stderr: `invalid unit or action name "Bad"`},
		{args: []string{"run", "db/0", "web/0", "backup"}, stderr: "all units must be of the same application"},
		{args: []string{"run", "db/0", "backup", "out"}, stderr: `argument "out" must be of the form key.key.key...=value`},
		{args: []string{"run", "db/0", "backup", "--background", "--wait", "1m"}, stderr: "cannot specify both --wait and --background"},
		{args: []string{"exec", "hostname"}, stderr: "You must specify a target, either through --all, --machine, --application or --unit"},
		{args: []string{"exec", "--all"}, stderr: "no commands specified"},
		{args: []string{"exec", "--all", "--unit", "db/0", "hostname"}, stderr: "You cannot specify --all and individual units"},
		{args: []string{"exec", "--machine", "x", "hostname"}},
		{args: []string{"show-task"}, stderr: "no task ID specified"},
		{args: []string{"show-task", "x"}, stderr: `task ID "x" not valid`},
		{args: []string{"show-task", "2", "--watch", "--wait", "1m"}, stderr: "specify either --watch or --wait but not both"},
		{args: []string{"show-operation"}, stderr: "no operation ID specified"},
		{args: []string{"operations", "--status", "done"}},
		{args: []string{"cancel-task"}, stderr: "no task IDs specified"},
		{args: []string{"actions"}, stderr: "no application name specified"},
		{args: []string{"actions", "db", "--schema", "--format", "tabular"}, stderr: "full schema not compatible with tabular output"},
		{args: []string{"show-action", "db"}, stderr: "no action specified"},
		{args: []string{"ssh"}, stderr: "no target name specified"},
		{args: []string{"ssh", "--container", "charm", "db/0"}},
		{args: []string{"ssh", "--proxy", "0"}},
		{args: []string{"scp", "a"}, stderr: "at least two arguments required"},
		{args: []string{"scp", "-r", "a", "0:"}},
		{args: []string{"add-ssh-key"}, stderr: "no ssh key specified"},
		{args: []string{"add-ssh-key", "not a key"}, stderr: `cannot add key "not a key": invalid ssh key: not a key`},
		{args: []string{"remove-ssh-key"}, stderr: "no ssh key id specified"},
		{args: []string{"ssh-keys", "x"}},
		{args: []string{"enable-ha", "-n", "2"}, stderr: "must specify a number of controllers odd and non-negative"},
		{args: []string{"enable-ha", "-n", "-1"}, stderr: "must specify a number of controllers odd and non-negative"},
		{args: []string{"enable-ha", "-n", "0"}, stderr: "-n 0 not valid: leave -n out for the default number of controllers"},
		{args: []string{"enable-ha", "-n", "x"}},
		{args: []string{"enable-ha", "3"}, stderr: `unrecognized args: ["3"]`},
		{args: []string{"remove-controller-member"}, stderr: "no controller member specified"},
		{args: []string{"remove-controller-member", "x"}, stderr: `invalid controller member id "x"`},
		{args: []string{"remove-controller-member", "1", "2"}, stderr: `unrecognized args: ["2"]`},
	}
	for _, c := range liveCommands(t) {
		args := strings.Fields(c.Name)
		cases = append(cases, usageCase{args: append(slices.Clone(args), "--no-such-option"),
			stderr: "option provided but not defined: --no-such-option"})
		if c.Formats != nil {
			cases = append(cases, usageCase{args: append(slices.Clone(args), "--format", "xml"),
				stderr: `invalid value "xml" for --format: expected one of ` + strings.Join(c.Formats, ", ")})
		}
	}
	for _, tc := range cases {
		before := dials.Load()
		code, stdout, stderr := jujuCLI(t, tc.args...)
		var problems []string
		if code != 2 {
			problems = append(problems, fmt.Sprintf("exit code %d, want 2", code))
		}
		if stdout != "" {
			problems = append(problems, "something on stdout")
		}
		if !usageErrorRe.MatchString(stderr) {
			problems = append(problems, "stderr is not one ERROR line")
		} else if tc.stderr != "" && stderr != "ERROR "+tc.stderr+"\n" {
			problems = append(problems, fmt.Sprintf("want stderr %q", "ERROR "+tc.stderr+"\n"))
		}
		if dials.Load() != before {
			problems = append(problems, "it connected to the controller")
		}
		if len(problems) > 0 {
			t.Errorf("juju %s: %s\nstdout: %q\nstderr: %q", strings.Join(tc.args, " "), strings.Join(problems, "; "), stdout, stderr)
		}
	}
}

// formatsOfCommand is the --format values of the named command of the tree.
func formatsOfCommand(t *testing.T, name string) []string {
	t.Helper()
	for _, c := range liveCommands(t) {
		if c.Name == name {
			return c.Formats
		}
	}
	t.Fatalf("no command %q", name)
	return nil
}
