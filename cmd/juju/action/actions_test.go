package action

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdActions(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		app           string
		schema        bool
		format        output.Format
	}{
		{args: "mysql", app: "mysql", format: defaultFormat},
		{args: "mysql --schema --format json", app: "mysql", schema: true, format: output.JSON},
		{args: "mysql --format tabular", app: "mysql", format: output.Tabular},
		{args: "", wantErr: "no application name specified", usage: true},
		{args: "Mysql", wantErr: `invalid application name "Mysql"`, usage: true},
		{args: "mysql pg", wantErr: `unrecognized args: ["pg"]`, usage: true},
		{args: "mysql --schema --format tabular", wantErr: "full schema not compatible with tabular output", usage: true},
		{args: "mysql --format plain", wantErr: `invalid value "plain" for --format: expected one of default, json, tabular, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *actionsOptions
			cmd := NewCmdActions(cmdutil.TestFactory(), func(o *actionsOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				return
			}
			if got.Application != tt.app || got.Schema != tt.schema || got.Format != tt.format {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func actionsCase(t *testing.T, opts *actionsOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	fake := &fakeAPI{specs: mysqlSpecs()}
	opts.IO, opts.ResolveModel = ios, testModel
	opts.Client = func(context.Context) (actionsAPI, error) { return fake, nil }
	err := actionsRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestActionsRun(t *testing.T) {
	for _, format := range []output.Format{defaultFormat, output.JSON, output.Tabular, output.YAML} {
		t.Run(string(format), func(t *testing.T) {
			stdout, stderr, err := actionsCase(t, &actionsOptions{Application: "mysql", Format: format})
			if err != nil || stderr != "" {
				t.Fatalf("err %v, stderr %q", err, stderr)
			}
			golden.Assert(t, stdout, "actions/mysql."+string(format)+".golden")
		})
	}
	// The schemas are JSON schema documents, not the fields docs/scripting.md describes:
	// their golden files are named as formatless output.
	for name, format := range map[string]output.Format{"schema": defaultFormat, "schemajson": output.JSON} {
		stdout, _, err := actionsCase(t, &actionsOptions{Application: "mysql", Format: format, Schema: true})
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, stdout, "actions/"+name+".stdout.golden")
	}
	stdout, stderr, err := actionsCase(t, &actionsOptions{Application: "empty", Format: defaultFormat})
	if err != nil || stdout != "" || stderr != "No actions defined for empty.\n" {
		t.Errorf("err %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	stdout, _, err = actionsCase(t, &actionsOptions{Application: "empty", Format: output.JSON})
	if err != nil || stdout != "{}\n" {
		t.Errorf("err %v, stdout %q", err, stdout)
	}
	_, _, err = actionsCase(t, &actionsOptions{Application: "nope", Format: defaultFormat})
	cmdtest.CheckErr(t, err, `application "nope" not found`, false)
}

func TestNewCmdShowAction(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
	}{
		{args: "mysql backup"},
		{args: "", wantErr: "no application specified", usage: true},
		{args: "mysql", wantErr: "no action specified", usage: true},
		{args: "Mysql backup", wantErr: `invalid application name "Mysql"`, usage: true},
		{args: "mysql backup x", wantErr: `unrecognized args: ["x"]`, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showActionOptions
			cmd := NewCmdShowAction(cmdutil.TestFactory(), func(o *showActionOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr == "" && (got.Application != "mysql" || got.Action != "backup") {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func TestShowActionRun(t *testing.T) {
	for _, action := range []string{"backup", "restart"} {
		ios, out, _ := output.TestStreams()
		opts := &showActionOptions{IO: ios, ResolveModel: testModel, Application: "mysql", Action: action,
			Client: func(context.Context) (actionsAPI, error) { return &fakeAPI{specs: mysqlSpecs()}, nil }}
		if err := showActionRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, out.String(), "show-action/"+action+".stdout.golden")
	}
	ios, out, _ := output.TestStreams()
	opts := &showActionOptions{IO: ios, ResolveModel: testModel, Application: "mysql", Action: "nope",
		Client: func(context.Context) (actionsAPI, error) { return &fakeAPI{specs: mysqlSpecs()}, nil }}
	cmdtest.CheckErr(t, showActionRun(context.Background(), opts), `unknown action "nope"`, false)
	if out.Len() != 0 {
		t.Errorf("stdout = %q", out)
	}
}
