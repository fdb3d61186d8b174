package provisioner_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/controller/worker/provisioner"
)

// agentHost is the agent host that the members of a controller share: one agent per instance
// directory, reading its configuration when it starts, and a start of an agent that runs is
// ignored (agent.Runner).
type agentHost struct {
	mu      sync.Mutex
	running map[string]agent.Conf
}

func (h *agentHost) StartMachineAgent(dir string) error {
	conf, err := agent.ReadConf(dir)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.running[dir]; !ok {
		h.running[dir] = conf
	}
	return nil
}

func (h *agentHost) StopTree(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.running, dir)
}

func (h *agentHost) agent(dir string) (agent.Conf, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.running[dir]
	return c, ok
}

// syncBuffer is a log destination the test reads while the worker writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A member takes the provisioner over from one that died mid-way (package singular), with the
// real local provider on the cloud directory and agent host they share: a machine whose
// instance the dead owner started but never recorded is provisioned once, on the same instance
// and address; a recorded machine whose agent never started only gets it started, with the
// password recorded; a running agent is left alone. Every agent can log in, and only the
// provisioning the new owner recorded is logged.
func TestTakeoverMidProvisioning(t *testing.T) {
	ctx := context.Background()
	old := local.UIDClaimsDir
	local.UIDClaimsDir = t.TempDir() // as root the provider gives machines uids of their own
	t.Cleanup(func() { local.UIDClaimsDir = old })
	cloud := t.TempDir()
	host := &agentHost{running: map[string]agent.Conf{}}
	dead, err := local.New(cloud, "127.0.0.1:17070", nil, host)
	if err != nil {
		t.Fatal(err)
	}
	uuid := workertest.NewModel(t, st)
	half, unstarted, running := addMachine(t, uuid, ""), addMachine(t, uuid, ""), addMachine(t, uuid, "")
	start := func(id string) (state.Instance, string) {
		inst, password, err := dead.StartInstance(ctx, local.StartArgs{ModelUUID: uuid, MachineID: id})
		if err != nil {
			t.Fatal(err)
		}
		return inst, password
	}
	halfInst, _ := start(half)
	for _, id := range []string{unstarted, running} {
		inst, password := start(id)
		if err := st.SetProvisioned(ctx, uuid, id, inst, state.HashPassword(password)); err != nil {
			t.Fatal(err)
		}
	}
	if err := dead.StartAgent(local.InstanceID(uuid, running)); err != nil {
		t.Fatal(err)
	}
	runningConf, _ := host.agent(filepath.Join(cloud, "instances", local.InstanceID(uuid, running)))

	p, err := local.New(cloud, "127.0.0.1:17070", nil, host)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	w := provisioner.New(st, p, slog.New(slog.NewTextHandler(&logs, nil)))
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(wctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("provisioner did not stop")
		}
	})

	dir := func(id string) string { return filepath.Join(cloud, "instances", local.InstanceID(uuid, id)) }
	workertest.Eventually(t, "every machine's agent running", func() bool {
		for _, id := range []string{half, unstarted, running} {
			if _, ok := host.agent(dir(id)); !ok {
				return false
			}
		}
		return true
	})
	snap := workertest.Snapshot(t, st, uuid)
	for _, id := range []string{half, unstarted, running} {
		mc := workertest.Machine(snap, id)
		conf, _ := host.agent(dir(id))
		if mc.InstanceId != local.InstanceID(uuid, id) {
			t.Errorf("machine %s: instance %q", id, mc.InstanceId)
		}
		if state.HashPassword(conf.Password) != mc.PasswordHash {
			t.Errorf("machine %s: its agent's password is not the one recorded: it cannot log in", id)
		}
	}
	if got := workertest.Machine(snap, half).DnsName; got != halfInst.DNSName {
		t.Errorf("machine %s provisioned again on address %s, not its instance's %s", half, got, halfInst.DNSName)
	}
	if conf, _ := host.agent(dir(running)); conf != runningConf {
		t.Errorf("the running agent was replaced")
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="machine provisioned"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "model="+uuid+" machine="+half+" ") {
		t.Errorf("provisionings logged: %q, want one, of machine %s", lines, half)
	}
}
