package model

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

type fakeModelsAPI struct {
	models []*jujupb.Model
	err    error
}

func (f fakeModelsAPI) ListModels(context.Context) ([]*jujupb.Model, error) { return f.models, f.err }

func TestNewCmdModels(t *testing.T) {
	var got *modelsOptions
	cmd := NewCmdModels(cmdutil.TestFactory(), func(o *modelsOptions) error { got = o; return nil })
	if err := execute(cmd, "--format json -c other"); err != nil {
		t.Fatal(err)
	}
	if got.Format != output.JSON || got.Controller != "other" {
		t.Errorf("opts = %+v", got)
	}
	cmd = NewCmdModels(cmdutil.TestFactory(), nil)
	checkErr(t, execute(cmd, "x"), `unrecognized args: ["x"]`, true)
}

var twoModels = []*jujupb.Model{
	{Name: "default", Uuid: "uuid-default", Owner: "admin", Life: "alive", Cloud: "localhost", Region: "localhost", Type: "iaas",
		Status: &jujupb.StatusInfo{Status: "available", Since: 1735787045000000000}, MachineCount: 2, UnitCount: 3},
	{Name: "controller", Uuid: "uuid-controller", Owner: "admin", Life: "alive", Cloud: "localhost", Region: "localhost", Type: "iaas",
		Status: &jujupb.StatusInfo{Status: "available"}},
	{Name: "new", Uuid: "uuid-new", Owner: "admin", Cloud: "localhost", Region: "localhost"},
}

func TestModelsRun(t *testing.T) {
	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			store := seededStore(t)
			ios, out, _ := output.TestStreams()
			opts := &modelsOptions{
				IO: ios, Store: store, Config: configOf("local", "default"), Format: f,
				Client: func(context.Context) (modelsAPI, error) { return fakeModelsAPI{models: twoModels}, nil },
				Now:    func() time.Time { return time.Unix(0, 1735787045000000000).Add(3 * time.Hour) },
			}
			if err := modelsRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "models/three."+string(f)+".golden")
			// The listing refreshes the cache.
			if m, err := store.ModelByName("local", "new"); err != nil || m.UUID != "uuid-new" {
				t.Errorf("cache after listing: %+v, %v", m, err)
			}
		})
	}
}

func TestModelsRunError(t *testing.T) {
	ios, _, _ := output.TestStreams()
	opts := &modelsOptions{
		IO: ios, Store: seededStore(t), Config: configOf("local", "default"), Format: output.Tabular,
		Client: func(context.Context) (modelsAPI, error) {
			return fakeModelsAPI{err: apierr.Errorf(apierr.PermissionDenied, "permission denied")}, nil
		},
	}
	err := modelsRun(context.Background(), opts)
	if !errors.Is(err, apierr.PermissionDenied) || err.Error() != "listing models: permission denied" {
		t.Errorf("err = %v", err)
	}
}
