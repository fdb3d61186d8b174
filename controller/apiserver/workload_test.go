package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

// workloadEnv is a real controller API with an admin client; with provision, the provisioner
// runs too, with the real local provider (its agents not started).
type workloadEnv struct{ *testEnv }

func startWorkloadEnv(t *testing.T, provision bool) *workloadEnv {
	t.Helper()
	if provision {
		return &workloadEnv{startTestEnv(t, withProvisioner())}
	}
	return &workloadEnv{startTestEnv(t)}
}

// unitAgent gives a unit a credential and returns a client acting as its agent.
func (e *workloadEnv) unitAgent(t *testing.T, unit string) *client.Client {
	t.Helper()
	password := "password-of-" + unit
	if err := e.st.SetUnitPassword(context.Background(), e.model, unit, state.HashPassword(password)); err != nil {
		t.Fatal(err)
	}
	return e.dial(t, "unit-"+strings.ReplaceAll(unit, "/", "-"), password, e.model)
}

const blogMeta = "name: blog\nsummary: blog\nrequires:\n  db: mysql\nbases: [ubuntu@22.04]\n"

const blogConfig = `options:
  title:
    type: string
    default: My Blog
    description: Blog title.
  port:
    type: int
    default: 8080
  debug:
    type: boolean
`

// deployBlog uploads the blog charm (with config.yaml) and deploys it.
func (e *workloadEnv) deployBlog(t *testing.T, name string, units int32, cons string, config map[string]string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	up, err := e.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": blogConfig}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.admin.Deploy(ctx, &pb.DeployRequest{
		Model: "default", Application: name, CharmUrl: up.Url, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"},
		NumUnits: units, Constraints: cons, Config: config,
	})
	return resp.GetUnits(), err
}

func findUnit(fs *pb.FullStatusResponse, name string) *pb.UnitStatus {
	for _, a := range fs.Applications {
		for _, u := range a.Units {
			if u.Name == name {
				return u
			}
		}
	}
	return nil
}

func TestUnitPortsAndWorkloadVersion(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 2, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := env.unitAgent(t, units[0])
	open, err := agent.SetUnitPorts(ctx, "", units[0], []string{"443", "80/tcp", "8000-8005/udp"}, nil)
	if err != nil || strings.Join(open, " ") != "80/tcp 443/tcp 8000-8005/udp" {
		t.Fatalf("open ports: %v %v", open, err)
	}
	if _, err := agent.SetUnitPorts(ctx, "", units[0], []string{"http"}, nil); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("bad port: %v", err)
	}
	// A unit's agent acts for itself only.
	if _, err := agent.SetUnitPorts(ctx, "", units[1], []string{"80"}, nil); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("other unit's ports: %v", err)
	}
	if err := agent.SetApplicationVersion(ctx, "", units[0], "6.4.1"); err != nil {
		t.Fatal(err)
	}
	if err := agent.SetUnitStatus(ctx, &pb.SetUnitStatusRequest{Id: units[0], PublicAddress: "10.0.0.7"}); err != nil {
		t.Fatal(err)
	}

	fs, err := env.admin.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := findUnit(fs, units[0]); strings.Join(u.GetOpenPorts(), " ") != "80/tcp 443/tcp 8000-8005/udp" {
		t.Errorf("status ports = %v", u.GetOpenPorts())
	}
	if v := fs.Applications[0].WorkloadVersion; v != "6.4.1" {
		t.Errorf("workload version = %q", v)
	}
	detail, err := env.admin.ShowUnit(ctx, "default", units[0])
	if err != nil || strings.Join(detail.Unit.GetOpenPorts(), " ") != "80/tcp 443/tcp 8000-8005/udp" {
		t.Errorf("show-unit ports = %v, %v", detail.GetUnit().GetOpenPorts(), err)
	}
	if v := detail.GetWorkloadVersion(); v != "6.4.1" {
		t.Errorf("show-unit workload version = %q", v)
	}
	au, err := agent.GetUnit(ctx, "", units[0])
	if err != nil || strings.Join(au.OpenPorts, " ") != "80/tcp 443/tcp 8000-8005/udp" || au.PublicAddress != "10.0.0.7" || au.Resolved != "" {
		t.Errorf("agent unit = %v, %v", au, err)
	}
	if open, err = agent.SetUnitPorts(ctx, "", units[0], nil, []string{"443/tcp", "8000-8005/udp"}); err != nil || strings.Join(open, " ") != "80/tcp" {
		t.Errorf("closed ports: %v %v", open, err)
	}
}

func TestResolveUnitErrors_LU2(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 3, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := env.unitAgent(t, units[0])
	fail := func(c *client.Client, unit, msg string) {
		t.Helper()
		err := c.SetUnitStatus(ctx, &pb.SetUnitStatusRequest{
			Model: env.model, Id: unit, AgentStatus: &pb.StatusInfo{Status: "idle"}, WorkloadStatus: &pb.StatusInfo{Status: "error", Message: msg},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fail(agent, units[0], `hook failed: "install"`)
	fail(env.admin, units[2], `hook failed: "config-changed"`)

	res, err := env.admin.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{
		Model: "default", Units: []string{units[0], units[1], "blog/9", "Blog"}, Retry: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`blog/0|will re-run "install" hook|`,
		`blog/1||unit "blog/1" is not in an error state`,
		`blog/9||unit "blog/9" not found`,
		`Blog||unit name "Blog" not valid`,
	}
	var got []string
	for _, r := range res {
		got = append(got, r.Name+"|"+r.Next+"|"+r.Error)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	au, err := agent.GetUnit(ctx, "", units[0])
	if err != nil || au.Resolved != "retry" {
		t.Fatalf("agent unit resolved = %q, %v", au.GetResolved(), err)
	}

	// --all: every unit in error; blog/0 is resolved already, blog/2 gets skipped.
	res, err = env.admin.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{Model: "default", All: true})
	if err != nil || len(res) != 2 || res[0].Error != `unit "blog/0" is already resolved` || res[1].Next != `will skip "config-changed" hook` {
		t.Fatalf("--all: %v %v", res, err)
	}
	if _, err := env.admin.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{Model: "default", All: true, Units: units[:1]}); !errors.Is(err, apierr.NotValid) ||
		!strings.Contains(err.Error(), "specifying unit names(s) with --all not supported") {
		t.Fatalf("--all with names: %v", err)
	}
	if _, err := env.admin.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{Model: "default"}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("nothing: %v", err)
	}

	// The agent acted: it clears the mark (its own only).
	if err := agent.ClearResolved(ctx, "", units[2]); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("clearing another unit: %v", err)
	}
	if err := agent.ClearResolved(ctx, "", units[0]); err != nil {
		t.Fatal(err)
	}
	if au, _ := agent.GetUnit(ctx, "", units[0]); au.GetResolved() != "" {
		t.Fatalf("resolved = %q after clearing", au.GetResolved())
	}
}

func TestApplicationConfig(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	if _, err := env.deployBlog(t, "bad", 1, "", map[string]string{"colour": "red"}); !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), `unknown option "colour"`) {
		t.Fatalf("unknown option: %v", err)
	}
	if _, err := env.deployBlog(t, "bad", 1, "", map[string]string{"port": "abc"}); !errors.Is(err, apierr.NotValid) ||
		!strings.Contains(err.Error(), `option "port": expected int, got "abc"`) {
		t.Fatalf("bad value: %v", err)
	}
	if fs, _ := env.admin.FullStatus(ctx, "default", nil); len(fs.GetApplications()) != 0 {
		t.Fatalf("a refused deploy left %v", fs.GetApplications())
	}
	units, err := env.deployBlog(t, "blog", 1, "", map[string]string{"port": "80"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.admin.GetConfig(ctx, "default", "blog")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, o := range cfg.Options {
		rows = append(rows, strings.Join([]string{o.Name, o.Type, o.Description, o.DefaultJson, o.ValueJson, o.Source}, "|"))
	}
	want := []string{"debug|boolean||||default", "port|int||8080|80|user", `title|string|Blog title.|"My Blog"|"My Blog"|default`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") || cfg.Application != "blog" || !strings.HasPrefix(cfg.Charm, "local:blog-") {
		t.Fatalf("config:\n%s", strings.Join(rows, "\n"))
	}

	agent := env.unitAgent(t, units[0])
	app, err := agent.GetApplication(ctx, "", "blog")
	if err != nil || app.ConfigJson != `{"port":80,"title":"My Blog"}` {
		t.Fatalf("agent config %q %v", app.GetConfigJson(), err)
	}
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "blog",
		Values: map[string]string{"debug": "true", "title": "News"}, Reset_: []string{"port"}}); err != nil {
		t.Fatal(err)
	}
	if app, _ = agent.GetApplication(ctx, "", "blog"); app.GetConfigJson() != `{"debug":true,"port":8080,"title":"News"}` {
		t.Fatalf("agent config after set %q", app.GetConfigJson())
	}
	for _, req := range []*pb.SetConfigRequest{
		{Application: "blog", Values: map[string]string{"nope": "1"}},
		{Application: "blog", Values: map[string]string{"debug": "maybe"}},
		{Application: "blog"},
	} {
		req.Model = "default"
		if err := env.admin.SetConfig(ctx, req); !errors.Is(err, apierr.NotValid) {
			t.Errorf("set %v: %v", req, err)
		}
	}
	if _, err := env.admin.GetConfig(ctx, "default", "nope"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown application: %v", err)
	}
}

// L-M5, seed 002: constraints the local provider cannot meet give a provisioning error that
// status shows; retry-provisioning with constraints it can meet provisions the machine.
func TestRetryProvisioningWithNewConstraints_LM5(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, true)
	units, err := env.deployBlog(t, "blog", 1, "mem=100000G", nil)
	if err != nil {
		t.Fatal(err)
	}
	fs := waitForStatus(t, env, "provisioning error", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && fs.Machines[0].GetInstanceStatus().GetStatus() == "provisioning error"
	})
	m := fs.Machines[0]
	if m.InstanceId != "" || m.AgentStatus.GetStatus() != "pending" ||
		!strings.HasPrefix(m.InstanceStatus.Message, "cannot satisfy constraints: mem=102400000M (host has ") {
		t.Fatalf("machine = %v", m)
	}
	u := findUnit(fs, units[0])
	if u.AgentStatus.GetStatus() != "allocating" || u.WorkloadStatus.GetStatus() != "waiting" || u.WorkloadStatus.GetMessage() != "waiting for machine" {
		t.Fatalf("unit = %v", u)
	}

	_, err = env.admin.RetryProvisioning(ctx, &pb.RetryProvisioningRequest{Model: "default", Machines: []string{m.Id}, Constraints: "mem=lots", ReplaceConstraints: true})
	if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`) {
		t.Fatalf("bad constraints: %v", err)
	}
	res, err := env.admin.RetryProvisioning(ctx, &pb.RetryProvisioningRequest{Model: "default", Machines: []string{"7", "x/y"}})
	if err != nil || len(res) != 2 || res[0].Error != "machine 7 not found" || res[1].Error != `invalid machine "x/y"` {
		t.Fatalf("bad machines: %v %v", res, err)
	}
	if _, err := env.admin.RetryProvisioning(ctx, &pb.RetryProvisioningRequest{Model: "default", All: true, Machines: []string{"0"}}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("--all with machines: %v", err)
	}
	res, err = env.admin.RetryProvisioning(ctx, &pb.RetryProvisioningRequest{Model: "default", All: true, Constraints: "mem=1M", ReplaceConstraints: true})
	if err != nil || len(res) != 1 || res[0].Name != m.Id || res[0].Error != "" {
		t.Fatalf("retry: %v %v", res, err)
	}
	fs = waitForStatus(t, env, "machine provisioned", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && fs.Machines[0].InstanceId != ""
	})
	if m := fs.Machines[0]; m.Constraints != "mem=1M" || m.InstanceStatus.GetStatus() != "running" {
		t.Fatalf("machine = %v", m)
	}
	res, err = env.admin.RetryProvisioning(ctx, &pb.RetryProvisioningRequest{Model: "default", Machines: []string{m.Id}})
	if err != nil || len(res) != 1 || res[0].Error != "machine "+m.Id+" is not in an error state" {
		t.Fatalf("retry a provisioned machine: %v %v", res, err)
	}
}

// waitForStatus polls status until ok (the test's own wait; the provisioner itself is driven
// by watches).
func waitForStatus(t *testing.T, env *workloadEnv, what string, ok func(*pb.FullStatusResponse) bool) *pb.FullStatusResponse {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fs, err := env.admin.FullStatus(context.Background(), "default", nil)
		if err == nil && ok(fs) {
			return fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v %v", what, fs, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
