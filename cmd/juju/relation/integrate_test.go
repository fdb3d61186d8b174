package relation

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

func TestNewCmdIntegrate(t *testing.T) {
	tests := []struct {
		args, wantErr string
	}{
		{args: "wordpress mysql"},
		{args: "wordpress:db mysql:db"},
		{args: "wordpress:db-admin mysql"},
		{args: "app-1a:my_endpoint mysql"},
		{args: "", wantErr: "an integration must involve two applications"},
		{args: "wordpress", wantErr: "an integration must involve two applications"},
		{args: "a b c", wantErr: "an integration must involve two applications"},
		{args: "wordpress: mysql", wantErr: `endpoint "wordpress:" not valid`},
		{args: "wordpress :db", wantErr: `endpoint ":db" not valid`},
		{args: "wordpress:db:x mysql", wantErr: `endpoint "wordpress:db:x" not valid`},
		{args: "wordpress mysql:DB", wantErr: `endpoint "mysql:DB" not valid`},
		{args: "wordpress mysql:1db", wantErr: `endpoint "mysql:1db" not valid`},
		{args: "wordpress mysql:db-", wantErr: `endpoint "mysql:db-" not valid`},
		{args: "Foo mysql", wantErr: `application name "Foo" not valid`},
		{args: "wordpress Foo:db", wantErr: `application name "Foo" not valid`},
		{args: "app-1 mysql", wantErr: `application name "app-1" not valid`},
		{args: "prod.mysql wordpress", wantErr: `application name "prod.mysql" not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *integrateOptions
			cmd := NewCmdIntegrate(cmdutil.TestFactory(), func(o *integrateOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if strings.Join(got.Endpoints, " ") != tt.args {
				t.Errorf("endpoints = %q", got.Endpoints)
			}
		})
	}
	if cmd := NewCmdIntegrate(cmdutil.TestFactory(), nil); len(cmd.Aliases) != 1 || cmd.Aliases[0] != "relate" {
		t.Errorf("aliases = %v", cmd.Aliases)
	}
}

// fakeIntegrate records the request and answers with err.
type fakeIntegrate struct {
	model     string
	endpoints []string
	err       error
}

func (f *fakeIntegrate) Integrate(_ context.Context, model string, endpoints []string) (*jujupb.IntegrateResponse, error) {
	f.model, f.endpoints = model, endpoints
	if f.err != nil {
		return nil, f.err
	}
	return &jujupb.IntegrateResponse{Id: 1, Key: "wordpress:db mysql:db"}, nil
}

func runIntegrate(t *testing.T, fake *fakeIntegrate, args string) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	cmd := NewCmdIntegrate(cmdutil.TestFactory(), func(o *integrateOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (integrateAPI, error) { return fake, nil }
		return integrateRun(context.Background(), o)
	})
	err = cmdtest.Execute(cmd, args)
	return out.String(), errOut.String(), err
}

func TestIntegrateRun(t *testing.T) {
	fake := &fakeIntegrate{}
	stdout, stderr, err := runIntegrate(t, fake, "wordpress mysql:db")
	if err != nil {
		t.Fatal(err)
	}
	if fake.model != "uuid-default" || strings.Join(fake.endpoints, " ") != "wordpress mysql:db" {
		t.Errorf("request = %s %q", fake.model, fake.endpoints)
	}
	if stdout+stderr != "" {
		t.Errorf("integrate printed %q %q", stdout, stderr)
	}
}

func TestIntegrateRunErrors(t *testing.T) {
	tests := []struct {
		name   string
		apiErr error
		want   error
	}{
		{name: "already-exists", want: apierr.AlreadyExists,
			apiErr: apierr.Errorf(apierr.AlreadyExists, `cannot add relation "wordpress:db mysql:db": relation wordpress:db mysql:db already exists`)},
		{name: "already-exists-bare", want: apierr.AlreadyExists,
			apiErr: apierr.Errorf(apierr.AlreadyExists, `relation "wordpress:db mysql:db" already exists`)},
		{name: "ambiguous", want: apierr.NotValid,
			apiErr: apierr.Errorf(apierr.NotValid, `ambiguous relation: "mediawiki mysql" could refer to "mediawiki:db mysql:db"; "mediawiki:slave mysql:db"`)},
		{name: "no-relations", want: apierr.NotFound, apiErr: apierr.Errorf(apierr.NotFound, "no relations found")},
		{name: "app-not-found", want: apierr.NotFound, apiErr: apierr.Errorf(apierr.NotFound, `application "nope" not found`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runIntegrate(t, &fakeIntegrate{err: tt.apiErr}, "wordpress mysql")
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.want)
			}
			var fe *cmdutil.FlagError
			if errors.As(err, &fe) {
				t.Error("a controller error must exit 1, not 2")
			}
			if stdout+stderr != "" {
				t.Errorf("integrate printed %q %q", stdout, stderr)
			}
			golden.Assert(t, err.Error()+"\n", "integrate/"+tt.name+".error.golden")
		})
	}
}
