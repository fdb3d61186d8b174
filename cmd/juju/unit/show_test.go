package unit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdShow(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantUnits     string
		wantFormat    output.Format
		wantUTC       bool
		wantEndpoint  string
		wantRelated   string
	}{
		{args: "mysql/0", wantUnits: "mysql/0", wantFormat: output.YAML},
		{args: "mysql/0 wordpress/10 --format json -o out.json --utc", wantUnits: "mysql/0 wordpress/10", wantFormat: output.JSON, wantUTC: true},
		{args: "", wantErr: "an unit name must be supplied"},
		{args: "mysql", wantErr: "unit name mysql not valid"},
		{args: "mysql/0 Bad/1", wantErr: "unit name Bad/1 not valid"},
		{args: "mysql/0 --format tabular", wantErr: `invalid value "tabular" for --format: expected one of json, yaml`},
		{args: "mysql/0 --endpoint db --related-unit wordpress/0", wantUnits: "mysql/0", wantFormat: output.YAML, wantEndpoint: "db", wantRelated: "wordpress/0"},
		{args: "mysql/0 --endpoint Db", wantErr: `endpoint name "Db" not valid`},
		{args: "mysql/0 --related-unit wordpress", wantErr: "unit name wordpress not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showOptions
			cmd := NewCmdShow(cmdutil.TestFactory(), func(o *showOptions) error { got = o; return nil })
			// A bad --format becomes a usage error only under root, which wraps flag errors.
			usage := !strings.HasPrefix(tt.wantErr, "invalid value")
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, usage)
			if tt.wantErr != "" {
				return
			}
			if strings.Join(got.Units, " ") != tt.wantUnits || got.Format != tt.wantFormat || got.UTC != tt.wantUTC ||
				got.Endpoint != tt.wantEndpoint || got.RelatedUnit != tt.wantRelated {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeShowUnit answers ShowUnit from details, and records what it was asked.
type fakeShowUnit struct {
	details map[string]*jujupb.UnitDetail
	err     error
	asked   []string
}

func (f *fakeShowUnit) ShowUnit(_ context.Context, model, unit string) (*jujupb.UnitDetail, error) {
	f.asked = append(f.asked, model+" "+unit)
	if f.err != nil {
		return nil, f.err
	}
	d, ok := f.details[unit]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", unit)
	}
	return d, nil
}

var showForceAt = time.Date(2026, 11, 21, 20, 30, 15, 0, time.UTC)

func unitDetails() map[string]*jujupb.UnitDetail {
	return map[string]*jujupb.UnitDetail{
		"mysql/0": {
			Application: "mysql", CharmUrl: "local:mysql-7", WorkloadVersion: "8.0.36",
			Unit: &jujupb.UnitStatus{
				Name: "mysql/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
				OpenPorts: []string{"33060/tcp", "3306/tcp"},
			},
			Relations: []*jujupb.RelationInfo{
				{
					RelationId: 2, Endpoint: "cluster", RelatedEndpoint: "cluster",
					LocalUnit: &jujupb.RelatedUnit{Unit: "mysql/0", InScope: true},
				},
				{
					RelationId: 1, Endpoint: "db", RelatedEndpoint: "db", Life: "alive",
					LocalUnit: &jujupb.RelatedUnit{Unit: "mysql/0", InScope: true, Data: map[string]string{"host": "10.0.0.10", "port": "3306"}},
					RelatedUnits: []*jujupb.RelatedUnit{
						{Unit: "wordpress/1", InScope: true},
						{Unit: "wordpress/0", InScope: true, Data: map[string]string{"database": "wordpress"}},
					},
				},
			},
		},
		"mysql/1": {
			Application: "mysql", CharmUrl: "local:mysql-7",
			Unit: &jujupb.UnitStatus{
				Name: "mysql/1", Machine: "1", Life: "dying", PublicAddress: "10.0.0.11",
				BlockedBy:  []string{"leaving relation wordpress:db mysql:db", "waiting for subordinate logging/1 to be removed"},
				ForceAfter: showForceAt.UnixNano(),
			},
			Relations: []*jujupb.RelationInfo{{
				RelationId: 1, Endpoint: "db", RelatedEndpoint: "db", Life: "dying",
				LocalUnit:    &jujupb.RelatedUnit{Unit: "mysql/1", InScope: true},
				RelatedUnits: []*jujupb.RelatedUnit{{Unit: "wordpress/0", InScope: false}},
			}},
		},
	}
}

func showTestModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

func TestShowRun(t *testing.T) {
	tests := []struct {
		name                  string
		units                 []string
		format                output.Format
		endpoint, relatedUnit string
	}{
		{name: "alive", units: []string{"mysql/0"}, format: output.YAML},
		{name: "endpoint", units: []string{"mysql/0"}, format: output.YAML, endpoint: "db"},
		{name: "related-unit", units: []string{"mysql/0", "mysql/1"}, format: output.YAML, relatedUnit: "wordpress/1"},
		{name: "related-unit", units: []string{"mysql/0", "mysql/1"}, format: output.JSON, relatedUnit: "wordpress/1"},
		{name: "alive", units: []string{"mysql/0"}, format: output.JSON},
		{name: "two", units: []string{"mysql/1", "mysql/0"}, format: output.YAML},
		{name: "dying", units: []string{"mysql/1"}, format: output.YAML},
		{name: "dying", units: []string{"mysql/1"}, format: output.JSON},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+string(tt.format), func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			fake := &fakeShowUnit{details: unitDetails()}
			opts := &showOptions{IO: ios, Format: tt.format, Units: tt.units, UTC: true, ResolveModel: showTestModel,
				Endpoint: tt.endpoint, RelatedUnit: tt.relatedUnit,
				Client: func(context.Context) (showAPI, error) { return fake, nil }}
			if err := showRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if len(fake.asked) != len(tt.units) || fake.asked[0] != "uuid-default "+tt.units[0] {
				t.Errorf("asked %q", fake.asked)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut)
			}
			golden.Assert(t, out.String(), "show-unit/"+tt.name+"."+string(tt.format)+".golden")
		})
	}
}

func TestShowRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		fake    *fakeShowUnit
		units   []string
		wantErr string
	}{
		{name: "not found", fake: &fakeShowUnit{details: unitDetails()}, units: []string{"mysql/0", "mysql/9"},
			wantErr: `unit "mysql/9" not found`},
		{name: "failure", fake: &fakeShowUnit{err: apierr.Errorf(apierr.Unavailable, "controller unavailable")}, units: []string{"mysql/0"},
			wantErr: `getting unit "mysql/0": controller unavailable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			opts := &showOptions{IO: ios, Format: output.YAML, Units: tt.units, ResolveModel: showTestModel,
				Client: func(context.Context) (showAPI, error) { return tt.fake, nil }}
			err := showRun(context.Background(), opts)
			cmdtest.CheckErr(t, err, tt.wantErr, false)
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on failure", out)
			}
		})
	}
	// The client failing to connect is reported as it is.
	noClient := errors.New("no controller")
	ios, _, _ := output.TestStreams()
	opts := &showOptions{IO: ios, Format: output.YAML, Units: []string{"mysql/0"}, ResolveModel: showTestModel,
		Client: func(context.Context) (showAPI, error) { return nil, noClient }}
	if err := showRun(context.Background(), opts); !errors.Is(err, noClient) {
		t.Errorf("err = %v", err)
	}
}
