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
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRemove(t *testing.T) {
	tests := []struct {
		args, wantErr, wantEndpoints    string
		wantID                          int64
		wantByID, wantForce, wantNoWait bool
	}{
		{args: "wordpress mysql", wantEndpoints: "wordpress mysql"},
		{args: "wordpress:db mysql:db --force", wantEndpoints: "wordpress:db mysql:db", wantForce: true},
		{args: "4", wantID: 4, wantByID: true},
		{args: "0 --force --no-wait", wantID: 0, wantByID: true, wantForce: true, wantNoWait: true},
		{args: "", wantErr: "a relation must involve two applications"},
		{args: "a b c", wantErr: "a relation must involve two applications"},
		{args: "wordpress", wantErr: `relation ID "wordpress" not valid`},
		{args: "-- -1", wantErr: `relation ID "-1" not valid`},
		{args: "1.5", wantErr: `relation ID "1.5" not valid`},
		{args: "wordpress: mysql", wantErr: `endpoint "wordpress:" not valid`},
		{args: "wordpress a:b:c", wantErr: `endpoint "a:b:c" not valid`},
		{args: "Foo mysql", wantErr: `application name "Foo" not valid`},
		{args: "4 --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "wordpress mysql --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "4 --no-prompt", wantErr: "unknown flag: --no-prompt"},
		{args: "4 --timeout 1m", wantErr: "--timeout without --wait not valid"},
		{args: "4 --wait --timeout 0s", wantErr: "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *removeOptions
			cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error { got = o; return nil })
			err := cmdtest.Execute(cmd, tt.args)
			if strings.HasPrefix(tt.wantErr, "unknown flag") {
				// root rewrites cobra's flag errors; only check that the flag is not taken.
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			cmdtest.CheckErr(t, err, tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if strings.Join(got.Endpoints, " ") != tt.wantEndpoints || got.ID != tt.wantID || got.ByID != tt.wantByID || got.Force != tt.wantForce || got.NoWait != tt.wantNoWait {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeRemoveRelation records the request and answers with err.
type fakeRemoveRelation struct {
	req *jujupb.RemoveRelationRequest
	err error
}

func (f *fakeRemoveRelation) RemoveRelation(_ context.Context, req *jujupb.RemoveRelationRequest) (*jujupb.RemoveRelationResponse, error) {
	f.req = req
	if f.err != nil {
		return nil, f.err
	}
	return &jujupb.RemoveRelationResponse{Id: 4, Key: "wordpress:db mysql:db", Outcome: "dying"}, nil
}

func runRemoveRelation(t *testing.T, fake *fakeRemoveRelation, args string) (string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (removeAPI, error) { return fake, nil }
		return removeRun(context.Background(), o)
	})
	err := cmdtest.Execute(cmd, args)
	return out.String() + errOut.String(), err
}

func TestRemoveRun(t *testing.T) {
	fake := &fakeRemoveRelation{}
	printed, err := runRemoveRelation(t, fake, "wordpress mysql:db --force")
	if err != nil {
		t.Fatal(err)
	}
	r := fake.req
	if r.GetModel() != "uuid-default" || strings.Join(r.GetEndpoints(), " ") != "wordpress mysql:db" || r.GetById() || !r.GetForce() {
		t.Errorf("request = %v", r)
	}
	if printed != "removing relation 4 (wordpress:db mysql:db): its units are leaving it\n" {
		t.Errorf("remove-relation printed %q", printed)
	}

	printed, err = runRemoveRelation(t, fake, "0 --force --no-wait")
	if err != nil || printed != "removing relation 4 (wordpress:db mysql:db): its units are leaving it\n" {
		t.Fatalf("by id: %q, %v", printed, err)
	}
	if r := fake.req; !r.GetById() || r.GetId() != 0 || len(r.GetEndpoints()) != 0 || !r.GetForce() || !r.GetNoWait() {
		t.Errorf("request = %v", r)
	}

	fake.err = apierr.Errorf(apierr.NotFound, `relation matching "wordpress mysql" not found`)
	_, err = runRemoveRelation(t, fake, "wordpress mysql")
	cmdtest.CheckErr(t, err, `relation matching "wordpress mysql" not found`, false)
	if !errors.Is(err, apierr.NotFound) {
		t.Errorf("err = %v, want NotFound", err)
	}
}

func TestRemoveRunWait(t *testing.T) {
	fake := &fakeRemoveRelation{}
	ios, out, errOut := output.TestStreams()
	api := cmdtest.NewWaitAPI(
		&jujupb.FullStatusResponse{Relations: []*jujupb.RelationStatus{{Id: 4, Life: "dying", BlockedBy: []string{"waiting for 1 unit to leave its scope: mysql/0"}}}},
		&jujupb.FullStatusResponse{},
	)
	cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (removeAPI, error) { return fake, nil }
		o.WaitClient = func(context.Context) (cmdutil.WaitAPI, error) { return api, nil }
		return removeRun(context.Background(), o)
	})
	if err := cmdtest.Execute(cmd, "wordpress mysql --wait"); err != nil {
		t.Fatal(err)
	}
	want := "removing relation 4 (wordpress:db mysql:db): its units are leaving it\n" +
		"waiting for removal of relation 4: dying\nrelation 4 removed\n"
	if out.Len() != 0 || errOut.String() != want {
		t.Errorf("stdout %q\nstderr %q\nwant   %q", out, errOut, want)
	}
	if strings.Join(api.Patterns[0], " ") != "wordpress mysql" {
		t.Errorf("status read for %v", api.Patterns[0])
	}
}
