package action

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/core/actions"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRun(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		units         string
		action        string
		keys          string // each argument's keys, joined by "."; arguments by " "
		wait          time.Duration
		background    bool
		format        output.Format
		params        string
		stringArgs    bool
		utc           bool
	}{
		{args: "mysql/0 backup", units: "mysql/0", action: "backup", wait: time.Minute, format: Plain},
		{args: "mysql/0 mysql/1 backup out=x file.kind=xz --wait 2m --format json --utc", units: "mysql/0 mysql/1",
			action: "backup", keys: "out file.kind", wait: 2 * time.Minute, format: output.JSON, utc: true},
		{args: "mysql/leader backup --params p.yml --string-args level=1 -o out.yaml --format yaml", units: "mysql/leader",
			action: "backup", keys: "level", wait: time.Minute, format: output.YAML, params: "p.yml", stringArgs: true},
		{args: "mysql/0 backup --background", units: "mysql/0", action: "backup", background: true, format: Plain},
		{args: "mysql/0 backup --wait -1s", units: "mysql/0", action: "backup", wait: -time.Second, format: Plain},
		{args: "mysql/0 get-password2", units: "mysql/0", action: "get-password2", wait: time.Minute, format: Plain},
		{args: "", wantErr: "no unit specified", usage: true},
		{args: "mysql/0", wantErr: "no action specified", usage: true},
		{args: "backup mysql/0", wantErr: "no unit specified", usage: true},
		{args: "mysql/0 Backup", wantErr: `invalid unit or action name "Backup"`, usage: true},
		{args: "mysql/x backup", wantErr: `invalid unit or action name "mysql/x"`, usage: true},
		{args: "mysql/0 wordpress/0 backup", wantErr: "all units must be of the same application", usage: true},
		{args: "mysql/0 backup out", wantErr: `argument "out" must be of the form key.key.key...=value`, usage: true},
		{args: "mysql/0 backup Out=1", usage: true,
			wantErr: `key "Out" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric and hyphens`},
		{args: "mysql/0 backup --background --wait 1m", wantErr: "cannot specify both --wait and --background", usage: true},
		{args: "mysql/0 backup --format tabular", wantErr: `invalid value "tabular" for --format: expected one of json, plain, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *runOptions
			cmd := NewCmdRun(cmdutil.TestFactory(), func(o *runOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				return
			}
			var keys []string
			for _, a := range got.Args {
				keys = append(keys, strings.Join(a.Keys, "."))
			}
			if strings.Join(got.Units, " ") != tt.units || got.Action != tt.action || strings.Join(keys, " ") != tt.keys ||
				got.Wait != tt.wait || got.Background != tt.background || got.Format != tt.format ||
				got.ParamsFile != tt.params || got.StringArgs != tt.stringArgs || got.UTC != tt.utc {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// runCase runs "juju run" against fake with opts' defaults filled in.
func runCase(t *testing.T, fake *fakeAPI, opts *runOptions) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO, opts.ResolveModel, opts.UTC = ios, testModel, true
	opts.Client = func(context.Context) (runAPI, error) { return fake, nil }
	if opts.Units == nil {
		opts.Units = []string{"mysql/0"}
	}
	if opts.Action == "" {
		opts.Action = "backup"
	}
	if opts.Wait == 0 && !opts.Background {
		opts.Wait = time.Minute
	}
	err = runRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestRunRun(t *testing.T) {
	backupDone := done("2", "mysql/0", "backup", "completed",
		`{"return-code":0,"stdout":"backing up\r\ndone\n","path":"/tmp/backup.tar","size":1024,"file":"backup.tar"}`,
		"dumping tables", "compressing")
	tests := []struct {
		name    string
		units   []string
		op      *jujupb.Operation
		updates []*jujupb.Task
		wantErr string
	}{
		{name: "completed", op: operation("1", queued("2", "mysql/0", "backup")),
			updates: []*jujupb.Task{queued("2", "mysql/0", "backup"), running("2", "mysql/0", "backup", "dumping tables"), backupDone}},
		{name: "no-values", op: operation("1", queued("2", "mysql/0", "backup")),
			updates: []*jujupb.Task{done("2", "mysql/0", "backup", "completed", `{"return-code":0,"stdout":"","stderr":""}`)}},
		{name: "action-fail", op: operation("1", queued("2", "mysql/0", "backup")),
			updates: []*jujupb.Task{func() *jujupb.Task {
				t := done("2", "mysql/0", "backup", "failed", `{"return-code":0,"reason":"disk full"}`)
				t.Message = "not enough space"
				return t
			}()}},
		{name: "exception", op: operation("1", queued("2", "mysql/0", "backup")),
			updates: []*jujupb.Task{func() *jujupb.Task {
				t := done("2", "mysql/0", "backup", "failed", `{"return-code":1,"stderr":"Traceback (most recent call last):\nValueError: boom\n"}`)
				t.Message = "exit status 1"
				return t
			}()},
			wantErr: "the following task failed:\n - id \"2\" with return code 1\n\nuse 'juju show-task' to inspect the failure\n"},
		{name: "two-units", units: []string{"mysql/0", "mysql/1"},
			op: operation("1", queued("2", "mysql/0", "backup"), queued("3", "mysql/1", "backup")),
			updates: []*jujupb.Task{
				done("3", "mysql/1", "backup", "completed", `{"return-code":0,"path":"/tmp/b1"}`),
				done("2", "mysql/0", "backup", "failed", `{"return-code":2,"stderr":"no disk"}`, "dumping tables"),
			},
			wantErr: "the following task failed:\n - id \"2\" with return code 2\n\nuse 'juju show-task' to inspect the failure\n"},
	}
	for _, tt := range tests {
		for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
			t.Run(tt.name+"/"+string(format), func(t *testing.T) {
				fake := &fakeAPI{specs: mysqlSpecs(), op: tt.op, updates: tt.updates}
				stdout, stderr, err := runCase(t, fake, &runOptions{Units: tt.units, Format: format})
				cmdtest.CheckErr(t, err, tt.wantErr, false)
				golden.Assert(t, stdout, "run/"+tt.name+"."+string(format)+".golden")
				if format == Plain {
					golden.Assert(t, stderr, "run/"+tt.name+".stderr.golden")
				}
				if len(fake.enqueued) != 1 || len(fake.watched) != 1 || strings.Join(fake.watched[0], ",") != strings.Join(operationTaskIDs(tt.op), ",") {
					t.Errorf("enqueued %v, watched %v", fake.enqueued, fake.watched)
				}
			})
		}
	}
}

func TestRunParams(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yml")
	if err := os.WriteFile(file, []byte("out: from-file\nfile:\n  kind: gz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := &fakeAPI{specs: mysqlSpecs(), op: operation("1", queued("2", "mysql/leader", "backup")), updates: []*jujupb.Task{
		done("2", "mysql/1", "backup", "completed", `{"return-code":0}`)}}
	opts := &runOptions{Units: []string{"mysql/leader"}, Format: output.JSON, ParamsFile: file,
		Args: parsedArgs(t, "file.quality=high", "level=3")}
	if _, _, err := runCase(t, fake, opts); err != nil {
		t.Fatal(err)
	}
	req := fake.enqueued[0]
	if strings.Join(req.GetReceivers(), ",") != "mysql/leader" || req.GetAction() != "backup" || req.GetModel() != "uuid-default" ||
		string(req.GetParamsJson()) != `{"file":{"kind":"gz","quality":"high"},"level":3,"out":"from-file"}` {
		t.Errorf("request = %v (params %s)", req, req.GetParamsJson())
	}
	if fake.calls[0] != "ApplicationActions uuid-default mysql" {
		t.Errorf("calls %q", fake.calls)
	}
}

// parsedArgs parses key=value arguments as the command line does.
func parsedArgs(t *testing.T, in ...string) []actions.Arg {
	t.Helper()
	var out []actions.Arg
	for _, s := range in {
		a, err := actions.ParseArg(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func TestRunBackground(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   *jujupb.Operation
	}{
		{name: "background", op: operation("1", queued("2", "mysql/0", "backup"))},
		{name: "background-two", op: operation("1", queued("2", "mysql/0", "backup"), queued("3", "mysql/1", "backup"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeAPI{specs: mysqlSpecs(), op: tc.op}
			stdout, stderr, err := runCase(t, fake, &runOptions{Units: []string{"mysql/0", "mysql/1"}, Background: true, Format: output.JSON})
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, stdout, "run/"+tc.name+".stdout.golden")
			golden.Assert(t, stderr, "run/"+tc.name+".stderr.golden")
			if len(fake.watched) != 0 {
				t.Errorf("watched %v in the background", fake.watched)
			}
		})
	}
}

func TestRunWaitEnds(t *testing.T) {
	op := operation("1", queued("2", "mysql/0", "backup"), queued("3", "mysql/1", "backup"), queued("4", "mysql/2", "backup"))
	// Task 3 finished, but run waits for the tasks in order: task 2 is the one it waits on.
	updates := []*jujupb.Task{running("2", "mysql/0", "backup"), done("3", "mysql/1", "backup", "completed", `{"return-code":0}`)}
	t.Run("timeout", func(t *testing.T) {
		fake := &fakeAPI{specs: mysqlSpecs(), op: op, updates: updates}
		stdout, stderr, err := runCase(t, fake, &runOptions{Units: []string{"mysql/0", "mysql/1", "mysql/2"}, Wait: 20 * time.Millisecond, Format: output.JSON})
		cmdtest.CheckErr(t, err, "timed out waiting for results from: unit mysql/0, unit mysql/1, unit mysql/2", false)
		if stdout != "" {
			t.Errorf("stdout = %q", stdout)
		}
		golden.Assert(t, stderr, "run/timeout.stderr.golden")
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fake := &fakeAPI{specs: mysqlSpecs(), op: op, updates: updates, idle: cancel}
		ios, out, _ := output.TestStreams()
		opts := &runOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (runAPI, error) { return fake, nil },
			Units: []string{"mysql/0"}, Action: "backup", Wait: -1, Format: output.JSON}
		err := runRun(ctx, opts)
		cmdtest.CheckErr(t, err, "stopped waiting for operation 1; its tasks keep running: see 'juju show-operation 1'", false)
		if out.Len() != 0 {
			t.Errorf("stdout = %q", out)
		}
	})
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yml")
	if err := os.WriteFile(list, []byte("- a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fake    *fakeAPI
		opts    runOptions
		wantErr string
		// enqueue says whether the request reached Enqueue (which then refused it).
		enqueue bool
	}{
		{name: "unknown action", fake: &fakeAPI{specs: mysqlSpecs()}, opts: runOptions{Action: "nope"},
			wantErr: `action "nope" not defined on unit "mysql/0" (not found)`},
		{name: "unknown application", fake: &fakeAPI{specs: mysqlSpecs()}, opts: runOptions{Units: []string{"nope/0"}},
			wantErr: `application "nope" not found (not found)`},
		// The controller checks the params against the schema: its refusal is shown as it is.
		{name: "params fail the schema", fake: &fakeAPI{specs: mysqlSpecs(),
			enqueueErr: apierr.Errorf(apierr.NotValid, `validation failed for action "backup": additional properties 'colour' not allowed`)},
			opts: runOptions{Args: parsedArgs(t, "colour=red")}, enqueue: true,
			wantErr: `validation failed for action "backup": additional properties 'colour' not allowed`},
		{name: "params file missing", fake: &fakeAPI{specs: mysqlSpecs()}, opts: runOptions{ParamsFile: filepath.Join(dir, "nope.yml")},
			wantErr: "reading params file: open " + filepath.Join(dir, "nope.yml") + ": no such file or directory"},
		{name: "params file not a map", fake: &fakeAPI{specs: mysqlSpecs()}, opts: runOptions{ParamsFile: list},
			wantErr: "params must contain a YAML map with string keys"},
		{name: "unknown unit", fake: &fakeAPI{specs: mysqlSpecs(), enqueueErr: apierr.Errorf(apierr.NotFound, `unit "mysql/7" not found`)},
			opts: runOptions{Units: []string{"mysql/7"}}, wantErr: `unit "mysql/7" not found (not found)`, enqueue: true},
		{name: "dying unit", fake: &fakeAPI{specs: mysqlSpecs(), enqueueErr: apierr.Errorf(apierr.NotAlive, `unit "mysql/1" is dying`)},
			opts: runOptions{Units: []string{"mysql/1"}}, wantErr: `unit "mysql/1" is dying`, enqueue: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runCase(t, tt.fake, &tt.opts)
			cmdtest.CheckErr(t, err, tt.wantErr, false)
			if stdout != "" || stderr != "" {
				t.Errorf("stdout %q, stderr %q", stdout, stderr)
			}
			if len(tt.fake.enqueued) != 0 || tt.enqueue != strings.Contains(strings.Join(tt.fake.calls, "\n"), "Enqueue") {
				t.Errorf("calls %q", tt.fake.calls)
			}
		})
	}
}

func TestRunParamsAreJSON(t *testing.T) {
	// --string-args keeps "1000" a string, which the schema of "out" wants.
	fake := &fakeAPI{specs: mysqlSpecs(), op: operation("1", queued("2", "mysql/0", "backup")),
		updates: []*jujupb.Task{done("2", "mysql/0", "backup", "completed", `{"return-code":0}`)}}
	if _, _, err := runCase(t, fake, &runOptions{StringArgs: true, Args: parsedArgs(t, "out=1000"), Format: output.JSON}); err != nil {
		t.Fatal(err)
	}
	var params map[string]any
	if err := json.Unmarshal(fake.enqueued[0].GetParamsJson(), &params); err != nil || params["out"] != "1000" {
		t.Errorf("params %s (%v)", fake.enqueued[0].GetParamsJson(), err)
	}
}

func TestRunParamsFromStdin(t *testing.T) {
	fake := &fakeAPI{specs: mysqlSpecs(), op: operation("1", queued("2", "mysql/0", "backup")),
		updates: []*jujupb.Task{done("2", "mysql/0", "backup", "completed", `{"return-code":0}`)}}
	ios, _, _ := output.TestStreams()
	ios.In = strings.NewReader("out: piped\n")
	opts := &runOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (runAPI, error) { return fake, nil },
		Units: []string{"mysql/0"}, Action: "backup", ParamsFile: "-", Wait: time.Minute, Format: output.JSON}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if got := string(fake.enqueued[0].GetParamsJson()); got != `{"out":"piped"}` {
		t.Errorf("params %s", got)
	}
}

func TestNewCmdRunColorFlags(t *testing.T) {
	for args, want := range map[string][2]bool{
		"mysql/0 backup":                         {false, false},
		"mysql/0 backup --color":                 {true, false},
		"mysql/0 backup --no-color":              {false, true},
		"mysql/0 backup --no-color --color -o x": {true, true},
	} {
		var got *runOptions
		cmd := NewCmdRun(cmdutil.TestFactory(), func(o *runOptions) error { got = o; return nil })
		if err := cmdtest.Execute(cmd, args); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if got.Color != want[0] || got.NoColor != want[1] {
			t.Errorf("%s: color %v, no-color %v", args, got.Color, got.NoColor)
		}
	}
}

// Juju's rule: --no-color wins; --color colours anywhere; else colour when the results go to a
// terminal that takes colour (Streams.Color: no NO_COLOR, TERM not dumb).
func TestUseColor(t *testing.T) {
	tests := []struct {
		terminal, color, noColor bool
		output                   string
		want                     bool
	}{
		{false, false, false, "", false},
		{true, false, false, "", true},
		{true, false, false, "out.yaml", false},
		{true, false, true, "", false},
		{false, true, false, "", true},
		{false, true, false, "out.yaml", true},
		{true, true, true, "", false},
	}
	for _, tt := range tests {
		s, _, _ := output.TestStreams()
		s.Color = tt.terminal
		if got := useColor(s, tt.color, tt.noColor, tt.output); got != tt.want {
			t.Errorf("%+v: useColor = %v", tt, got)
		}
	}
}

// With colour, run's results, progress lines and failures are coloured as Juju colours them.
func TestRunColor(t *testing.T) {
	backupDone := done("2", "mysql/0", "backup", "completed",
		`{"return-code":0,"stdout":"backing up\r\ndone\n","path":"/tmp/backup.tar","size":1024,"compressed":true,"host":"10.0.0.1","net":"10.0.0.0/24"}`,
		"dumping tables")
	failed := done("2", "mysql/0", "backup", "failed", `{"return-code":1,"reason":"disk full"}`)
	failed.Message = "exit status 1"
	tests := []struct {
		name    string
		updates []*jujupb.Task
		wantErr string
	}{
		{name: "completed", updates: []*jujupb.Task{running("2", "mysql/0", "backup", "dumping tables"), backupDone}},
		{name: "failed", updates: []*jujupb.Task{failed},
			wantErr: "the following task failed:\n - id \"2\" with return code \x1b[35m1\x1b[0m\n\nuse 'juju show-task' to inspect the failure\n"},
	}
	for _, tt := range tests {
		for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
			t.Run(tt.name+"/"+string(format), func(t *testing.T) {
				fake := &fakeAPI{specs: mysqlSpecs(), op: operation("1", queued("2", "mysql/0", "backup")), updates: tt.updates}
				stdout, stderr, err := runCase(t, fake, &runOptions{Format: format, Color: true})
				cmdtest.CheckErr(t, err, tt.wantErr, false)
				// <case>.<format>.color: the contract tests decode *.json.golden and *.yaml.golden.
				golden.Assert(t, stdout, "run/"+tt.name+"."+string(format)+".color.golden")
				if format == Plain {
					golden.Assert(t, stderr, "run/"+tt.name+".color.stderr.golden")
				}
			})
		}
	}
	t.Run("background", func(t *testing.T) {
		fake := &fakeAPI{specs: mysqlSpecs(), op: operation("1", queued("2", "mysql/0", "backup"), queued("3", "mysql/1", "backup"))}
		stdout, stderr, err := runCase(t, fake, &runOptions{Units: []string{"mysql/0", "mysql/1"}, Background: true, Format: Plain, Color: true})
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, stdout, "run/background-two.color.stdout.golden")
		golden.Assert(t, stderr, "run/background-two.color.stderr.golden")
	})
}

// colorYAML's rules on what run's results can hold, Juju's YamlFormatter's: numbers,
// booleans, addresses and networks, block scalars, lists, URLs, empty lines and comments.
func TestColorYAMLRules(t *testing.T) {
	doc := `results:
  count: 3
  ratio: "0.5"
  enabled: true
  host: 10.0.0.1
  net: 10.0.0.0/24
  url: http://example.com:8080/x
  notes: |-
    first: line

    second line
  after: yes
  items:
    - a: 1
    - plain item
# a comment
`
	var b strings.Builder
	colorYAML(&b, doc)
	golden.Assert(t, b.String(), "run/rules.yaml.color.golden")
}
