package model

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdSwitch(t *testing.T) {
	var got *switchOptions
	cmd := NewCmdSwitch(cmdutil.TestFactory(), func(o *switchOptions) error { got = o; return nil })
	if err := execute(cmd, "local:other"); err != nil {
		t.Fatal(err)
	}
	if got.Target != "local:other" {
		t.Errorf("target = %q", got.Target)
	}
	cmd = NewCmdSwitch(cmdutil.TestFactory(), nil)
	checkErr(t, execute(cmd, "a b"), `unrecognized args: ["b"]`, true)
}

// lookupModel knows the models "default", "controller" (cached) and "remote" (on the controller).
func lookupModel(store *cmdutil.Store) func(context.Context, string, string) (*cmdutil.ModelRef, error) {
	return func(_ context.Context, ctrl, name string) (*cmdutil.ModelRef, error) {
		if _, err := store.ModelByName(ctrl, name); err == nil || name == "remote" {
			return &cmdutil.ModelRef{Controller: ctrl, Name: name, Owner: "admin"}, nil
		}
		return nil, apierr.Errorf(apierr.NotFound, "model %s:admin/%s not found", ctrl, name)
	}
}

func TestSwitchRun(t *testing.T) {
	tests := []struct {
		target, wantStdout, wantStderr, wantErr string
		wantCtrl, wantModel                     string
	}{
		{target: "", wantStdout: "local:admin/default\n", wantCtrl: "local", wantModel: "default"},
		{target: "controller", wantStderr: "local:admin/default -> local:admin/controller\n", wantCtrl: "local", wantModel: "controller"},
		{target: "local:remote", wantStderr: "local:admin/default -> local:admin/remote\n", wantCtrl: "local", wantModel: "remote"},
		{target: "other", wantStderr: "local:admin/default -> other:admin/staging\n", wantCtrl: "other", wantModel: "staging"},
		{target: "other:", wantStderr: "local:admin/default -> other:admin/staging\n", wantCtrl: "other", wantModel: "staging"},
		{target: "nope", wantErr: `"nope" is not the name of a model or controller`, wantCtrl: "local", wantModel: "default"},
		{target: "nope:default", wantErr: `"nope:default" is not the name of a model or controller`, wantCtrl: "local", wantModel: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			store := seededStore(t)
			_ = store.AddController("other", cmdutil.ControllerDetails{UUID: "o"})
			_ = store.UpdateAccount("other", cmdutil.AccountDetails{User: "admin"})
			_ = store.UpdateModel("other", "staging", cmdutil.ModelDetails{UUID: "s"})
			_ = store.SetCurrentModel("other", "staging")
			ios, out, errOut := output.TestStreams()
			opts := &switchOptions{IO: ios, Store: store, Config: configOf("local", "default"), LookupModel: lookupModel(store), Target: tt.target}
			err := switchRun(context.Background(), opts)
			checkErr(t, err, tt.wantErr, false)
			if out.String() != tt.wantStdout || errOut.String() != tt.wantStderr {
				t.Errorf("stdout %q stderr %q, want %q %q", out.String(), errOut.String(), tt.wantStdout, tt.wantStderr)
			}
			ctrl, _ := store.CurrentController()
			model, _ := store.CurrentModel(ctrl)
			if ctrl != tt.wantCtrl || model != tt.wantModel {
				t.Errorf("current = %s:%s, want %s:%s", ctrl, model, tt.wantCtrl, tt.wantModel)
			}
		})
	}
}

func TestSwitchRunNoControllers(t *testing.T) {
	ios, _, _ := output.TestStreams()
	opts := &switchOptions{IO: ios, Store: cmdutil.NewStore(t.TempDir()), Config: configOf("", "")}
	if err := switchRun(context.Background(), opts); err != cmdutil.ErrNoControllers {
		t.Errorf("err = %v", err)
	}
}
