package action

import (
	"context"
	"strings"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdExec(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		command       string
		all           bool
		machines      string
		apps          string
		units         string
		wait          time.Duration
		format        output.Format
	}{
		{args: "--unit mysql/0 hostname", command: "hostname", units: "mysql/0", wait: 5 * time.Minute, format: Plain},
		{args: "--unit mysql/0 -- ls -la /var/lib", command: "ls -la /var/lib", units: "mysql/0", wait: 5 * time.Minute, format: Plain},
		{args: "-u mysql/0,mysql/leader -u wordpress/1 --machine 0,0/lxd/1 -a mysql --app wordpress --application pg --format json --wait 10s -- echo hi",
			command: "echo hi", units: "mysql/0 mysql/leader wordpress/1", machines: "0 0/lxd/1", apps: "mysql wordpress pg",
			wait: 10 * time.Second, format: output.JSON},
		{args: "--all --format yaml -- uptime", command: "uptime", all: true, wait: 5 * time.Minute, format: output.YAML},
		{args: "--all --background -- uptime", command: "uptime", all: true, format: Plain},
		{args: "--all", wantErr: "no commands specified", usage: true},
		{args: "hostname", wantErr: "You must specify a target, either through --all, --machine, --application or --unit", usage: true},
		{args: "--all --machine 0 hostname", wantErr: "You cannot specify --all and individual machines", usage: true},
		{args: "--all --app mysql hostname", wantErr: "You cannot specify --all and individual applications", usage: true},
		{args: "--all --unit mysql/0 hostname", wantErr: "You cannot specify --all and individual units", usage: true},
		{args: "--machine x --unit mysql --app Bad hostname", usage: true,
			wantErr: `The following exec targets are not valid: "x" is not a valid machine id; "Bad" is not a valid application name; "mysql" is not a valid unit name`},
		{args: "--all --background --wait 1m hostname", wantErr: "cannot specify both --wait and --background", usage: true},
		{args: "--all --format tabular hostname", wantErr: `invalid value "tabular" for --format: expected one of json, plain, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *execOptions
			cmd := NewCmdExec(cmdutil.TestFactory(), func(o *execOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				return
			}
			if got.Command != tt.command || got.All != tt.all || strings.Join(got.Machines, " ") != tt.machines ||
				strings.Join(got.Applications, " ") != tt.apps || strings.Join(got.Units, " ") != tt.units ||
				got.Wait != tt.wait || got.Format != tt.format {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func TestShellJoin(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"echo", "hi"}, "echo hi"},
		{[]string{"echo", "hello world"}, `echo "hello world"`},
		{[]string{"echo", `say "hi"`, "$HOME", `a\b`, ""}, `echo "say \"hi\"" "\$HOME" "a\\b" ""`},
		{[]string{"ls", "*.txt", "a;b"}, `ls "*.txt" "a;b"`},
	} {
		if got := shellJoin(tc.args); got != tc.want {
			t.Errorf("shellJoin(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func execCase(t *testing.T, fake *fakeAPI, opts *execOptions) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO, opts.ResolveModel, opts.UTC = ios, testModel, true
	opts.Client = func(context.Context) (execAPI, error) { return fake, nil }
	if opts.Command == "" {
		opts.Command = "hostname"
	}
	if opts.Wait == 0 && !opts.Background {
		opts.Wait = 5 * time.Minute
	}
	err = execRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestExecRun(t *testing.T) {
	tests := []struct {
		name    string
		opts    execOptions
		op      *jujupb.Operation
		updates []*jujupb.Task
		wantErr string
	}{
		{name: "unit", opts: execOptions{Units: []string{"mysql/0"}},
			op:      operation("1", queued("2", "mysql/0", "juju-exec")),
			updates: []*jujupb.Task{done("2", "mysql/0", "juju-exec", "completed", `{"return-code":0,"stdout":"db-host-0"}`)}},
		{name: "machines", opts: execOptions{Machines: []string{"0", "1"}},
			op: operation("1", queued("2", "0", "juju-exec"), queued("3", "1", "juju-exec")),
			updates: []*jujupb.Task{
				done("2", "0", "juju-exec", "completed", `{"return-code":0,"stdout":"machine-0\n","stderr":"warning: low disk\n"}`),
				done("3", "1", "juju-exec", "completed", `{"return-code":0,"stdout":"machine-1\n"}`),
			}},
		{name: "failure", opts: execOptions{Units: []string{"mysql/0"}},
			op: operation("1", queued("2", "mysql/0", "juju-exec")),
			updates: []*jujupb.Task{done("2", "mysql/0", "juju-exec", "failed",
				`{"return-code":127,"stderr":"bash: line 1: nosuch: command not found\n"}`)},
			wantErr: "the following task failed:\n - id \"2\" with return code 127\n\nuse 'juju show-task' to inspect the failure\n"},
	}
	for _, tt := range tests {
		for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
			t.Run(tt.name+"/"+string(format), func(t *testing.T) {
				fake := &fakeAPI{op: tt.op, updates: tt.updates}
				opts := tt.opts
				opts.Format = format
				stdout, stderr, err := execCase(t, fake, &opts)
				cmdtest.CheckErr(t, err, tt.wantErr, false)
				golden.Assert(t, stdout, "exec/"+tt.name+"."+string(format)+".golden")
				if stderr != "" {
					t.Errorf("stderr = %q, want nothing without --verbose", stderr)
				}
				req := fake.enqueued[0]
				if req.GetCommand() != "hostname" || req.GetAction() != "" || req.GetExecTimeoutSeconds() != 300 ||
					strings.Join(req.GetReceivers(), " ") != strings.Join(append(opts.Units, opts.Machines...), " ") {
					t.Errorf("request = %v", req)
				}
			})
		}
	}
}

func TestExecAllVerbose(t *testing.T) {
	fake := &fakeAPI{machines: []string{"10", "2", "0/lxd/0", "0"},
		op: operation("1", queued("2", "0", "juju-exec")),
		updates: []*jujupb.Task{running("2", "0", "juju-exec", "started"),
			done("2", "0", "juju-exec", "completed", `{"return-code":0,"stdout":"up 3 days\n"}`, "started")}}
	ios, out, errOut := output.TestStreams()
	ios.Verbose = true
	opts := &execOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (execAPI, error) { return fake, nil },
		Command: "uptime", All: true, Wait: 10500 * time.Millisecond, Format: Plain, UTC: true}
	if err := execRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	req := fake.enqueued[0]
	if strings.Join(req.GetReceivers(), " ") != "0 0/lxd/0 2 10" || req.GetExecTimeoutSeconds() != 11 {
		t.Errorf("request = %v", req)
	}
	golden.Assert(t, out.String(), "exec/all-verbose.stdout.golden")
	golden.Assert(t, errOut.String(), "exec/all-verbose.stderr.golden")
}

func TestExecTimeout(t *testing.T) {
	fake := &fakeAPI{op: operation("1", queued("2", "0", "juju-exec")), updates: []*jujupb.Task{running("2", "0", "juju-exec")}}
	stdout, stderr, err := execCase(t, fake, &execOptions{Machines: []string{"0"}, Wait: 20 * time.Millisecond, Format: output.JSON})
	cmdtest.CheckErr(t, err, "timed out waiting for results from: machine 0", false)
	if stdout != "" || stderr != "" {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
}

func TestNewCmdExecLockOperatorAndColorFlags(t *testing.T) {
	tests := []struct {
		args           string
		parallel       bool
		group          string
		operator       bool
		color, noColor bool
		wantErr        string
		wantUsage      bool
	}{
		{args: "--unit mysql/0 hostname", parallel: true},
		{args: "--machine 0 --parallel=false --execution-group db-ops -- uptime", group: "db-ops"},
		{args: "--all --parallel --execution-group=upgrades uptime", parallel: true, group: "upgrades"},
		{args: "--application mysql --operator hostname", parallel: true, operator: true},
		{args: "--unit mysql/0 --color --no-color hostname", parallel: true, color: true, noColor: true},
		{args: "--unit mysql/0 --parallel=maybe hostname",
			wantErr: `invalid argument "maybe" for "--parallel" flag: strconv.ParseBool: parsing "maybe": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *execOptions
			cmd := NewCmdExec(cmdutil.TestFactory(), func(o *execOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.wantUsage)
			if tt.wantErr != "" {
				return
			}
			if got.Parallel != tt.parallel || got.ExecutionGroup != tt.group || got.Operator != tt.operator ||
				got.Color != tt.color || got.NoColor != tt.noColor {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// --parallel and --execution-group reach the controller as Juju sends them: always, --all
// included.
func TestExecSendsParallelAndExecutionGroup(t *testing.T) {
	for _, opts := range []execOptions{
		{Units: []string{"mysql/0"}, Parallel: true},
		{Machines: []string{"0"}, Parallel: false, ExecutionGroup: "db-ops"},
		{All: true, Parallel: false, ExecutionGroup: "upgrades"},
	} {
		fake := &fakeAPI{machines: []string{"0"}, op: operation("1", queued("2", "0", "juju-exec")),
			updates: []*jujupb.Task{done("2", "0", "juju-exec", "completed", `{"return-code":0}`)}}
		opts.Format = output.JSON
		if _, _, err := execCase(t, fake, &opts); err != nil {
			t.Fatal(err)
		}
		req := fake.enqueued[0]
		if req.Parallel == nil || req.ExecutionGroup == nil || req.GetParallel() != opts.Parallel || req.GetExecutionGroup() != opts.ExecutionGroup {
			t.Errorf("%+v: request parallel %v group %v", opts, req.Parallel, req.ExecutionGroup)
		}
	}
}

// --operator is for Kubernetes models: refused, as Juju refuses it on a machine model, before
// anything is queued.
func TestExecOperatorRefused(t *testing.T) {
	for _, opts := range []execOptions{{Units: []string{"mysql/0"}, Operator: true}, {All: true, Operator: true}} {
		fake := &fakeAPI{}
		stdout, stderr, err := execCase(t, fake, &opts)
		cmdtest.CheckErr(t, err, "only k8s models support the --operator flag", false)
		if stdout != "" || stderr != "" || len(fake.calls) != 0 {
			t.Errorf("stdout %q, stderr %q, calls %q", stdout, stderr, fake.calls)
		}
	}
}

// With colour, yaml and json are coloured as Juju colours them; the plain format, the
// commands' own output, is not.
func TestExecColor(t *testing.T) {
	op := operation("1", queued("2", "0", "juju-exec"), queued("3", "1", "juju-exec"))
	updates := []*jujupb.Task{
		done("2", "0", "juju-exec", "completed", `{"return-code":0,"stdout":"machine-0\n","stderr":"warning: low disk\n"}`),
		done("3", "1", "juju-exec", "completed", `{"return-code":0,"stdout":"machine-1\n"}`),
	}
	for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
		t.Run(string(format), func(t *testing.T) {
			fake := &fakeAPI{op: op, updates: updates}
			stdout, _, err := execCase(t, fake, &execOptions{Machines: []string{"0", "1"}, Format: format, Color: true})
			if err != nil {
				t.Fatal(err)
			}
			// <case>.<format>.color: the contract tests decode *.json.golden and *.yaml.golden.
			name := "exec/machines." + string(format) + ".color.golden"
			if format == Plain {
				name = "exec/machines.plain.golden"
			}
			golden.Assert(t, stdout, name)
			fake = &fakeAPI{op: op, updates: updates}
			noColor, _, err := execCase(t, fake, &execOptions{Machines: []string{"0", "1"}, Format: format, Color: true, NoColor: true})
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, noColor, "exec/machines."+string(format)+".golden")
		})
	}
}
