package hooktool

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// opsDir is the ops library the charms of the end-to-end tests use.
var opsDir = filepath.Join("..", "..", "..", "..", "shared", "thirdparty", "ops-2.20.0")

// opsScript drives ops's own _ModelBackend and _JujuStorageBackend, which run the tools as
// charms do, and prints what ops made of each answer as one JSON object.
const opsScript = `
import json, sys, types
sys.modules.setdefault('websocket', types.ModuleType('websocket'))  # ops.pebble imports it; unused here
sys.path.insert(0, sys.argv[1])
import ops.model, ops.storage

b = ops.model._ModelBackend()
out = {}

def record(name, fn):
    try:
        out[name] = fn()
    except ops.model.RelationNotFoundError:
        out[name] = 'RelationNotFoundError'
    except ops.model.ModelError as e:
        out[name] = 'ModelError: ' + str(e).strip()
    except Exception as e:
        out[name] = type(e).__name__ + ': ' + str(e).strip()

record('relation_ids', lambda: b.relation_ids('db'))
record('relation_list', lambda: b.relation_list(3))
record('relation_list_missing', lambda: b.relation_list(9))
record('remote_app_own', lambda: b.relation_remote_app_name(3))
record('remote_app_other', lambda: b.relation_remote_app_name(0))
record('remote_app_missing', lambda: b.relation_remote_app_name(9))
record('relation_get_unit', lambda: b.relation_get(3, 'mysql/0', False))
record('relation_get_app', lambda: b.relation_get(3, 'mysql', True))
record('relation_get_own_app', lambda: b.relation_get(3, 'wordpress', True))
record('relation_get_missing', lambda: b.relation_get(9, 'mysql/0', False))
record('relation_set', lambda: b.relation_set(3, {'a': '1', 'b': ''}, False))
record('relation_set_app', lambda: b.relation_set(3, {'c': 'x y'}, True))
record('relation_set_missing', lambda: b.relation_set(9, {'a': '1'}, False))
record('relation_model_get', lambda: b.relation_model_get(3))
record('relation_model_get_missing', lambda: b.relation_model_get(9))
record('config_get', lambda: b.config_get())
record('is_leader', lambda: b.is_leader())
record('status_get_unit', lambda: b.status_get(is_app=False))
record('status_get_app', lambda: b.status_get(is_app=True))
record('status_set', lambda: b.status_set('active', '', is_app=False))
record('status_set_app', lambda: b.status_set('blocked', 'need db', is_app=True))
record('application_version_set', lambda: b.application_version_set('1.0-rc1'))
record('juju_log', lambda: b.juju_log('INFO', '--format=json looks like a flag'))
def network(binding, rel=None):
    n = ops.model.Network(b.network_get(binding, rel))
    return {'interfaces': [[i.name, str(i.address), str(i.subnet)] for i in n.interfaces],
            'bind_address': str(n.bind_address), 'ingress_address': str(n.ingress_address),
            'egress_subnets': [str(s) for s in n.egress_subnets]}
record('network_get', lambda: network('db'))
record('network_get_relation', lambda: network('db', 3))
record('network_get_missing_relation', lambda: network('db', 9))
record('network_get_unknown', lambda: network('nope'))
record('planned_units', lambda: b.planned_units())
record('opened_ports', lambda: sorted([p.protocol, p.port] for p in b.opened_ports()))
record('open_port', lambda: b.open_port('tcp', 8080))
record('open_icmp', lambda: b.open_port('icmp'))
record('close_port', lambda: b.close_port('udp', 53))
record('secret_get', lambda: b.secret_get(id='secret:abc'))
record('storage_list', lambda: b.storage_list('data'))
def cloud_spec():
    c = b.credential_get()
    return {'type': c.type, 'name': c.name, 'region': c.region, 'endpoint': c.endpoint,
            'auth_type': c.credential.auth_type, 'attributes': c.credential.attributes,
            'is_controller_cloud': c.is_controller_cloud}
record('credential_get', cloud_spec)

s = ops.storage._JujuStorageBackend()
record('state_set', lambda: s.set('StoredStateData[_stored]', {'a': 1, 'b': [1, 2], 'c': 'x'}))
record('state_get', lambda: s.get('StoredStateData[_stored]'))
record('state_delete', lambda: s.delete('StoredStateData[_stored]'))
record('state_get_missing', lambda: s.get('StoredStateData[_stored]'))

print(json.dumps(out))
`

// TestOpsModelBackend runs ops 2.20's _ModelBackend against the tools, through real symlinks,
// with exactly the arguments ops passes, and checks what ops makes of the answers.
func TestOpsModelBackend(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if _, err := os.Stat(filepath.Join(opsDir, "ops", "model.py")); err != nil {
		t.Skipf("no ops library: %v", err)
	}
	if err := exec.Command(python, "-c", "import yaml").Run(); err != nil {
		t.Skip("python3 has no yaml module")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fixedInterfaces(t)
	f := newFake()
	s := startServer(t, f)
	toolsDir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(toolsDir, exe); err != nil {
		t.Fatal(err)
	}
	absOps, err := filepath.Abs(opsDir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", opsScript, absOps)
	cmd.Env = []string{
		"PATH=" + toolsDir + ":/usr/bin:/bin", "JUJU_UNIT_NAME=wordpress/0", "JUJU_MODEL_NAME=default", "JUJU_MODEL_UUID=" + testModelUUID,
		"JUJU_VERSION=3.6.4", "JUJU_AGENT_SOCKET=" + s.Addr(), "JUJU_CONTEXT_ID=ctx-1",
		"JUJU_RELATION=db", "JUJU_RELATION_ID=db:3", "JUJU_REMOTE_UNIT=mysql/0", "JUJU_REMOTE_APP=mysql",
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("ops: %v\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("ops printed %q: %v", stdout, err)
	}
	network := map[string]any{
		"interfaces":   []any{[]any{"eth0", "10.0.0.1", "10.0.0.0/24"}},
		"bind_address": "10.0.0.1", "ingress_address": "10.0.0.1", "egress_subnets": []any{"10.0.0.1/32"},
	}
	want := map[string]any{
		"relation_ids":                 []any{3.0, 4.0},
		"relation_list":                []any{"mysql/0", "mysql/1"},
		"relation_list_missing":        "RelationNotFoundError",
		"remote_app_own":               "mysql", // from JUJU_REMOTE_APP
		"remote_app_other":             "wordpress",
		"remote_app_missing":           nil,
		"relation_get_unit":            map[string]any{"host": "10.0.0.2", "port": "3306", "user": "wp"},
		"relation_get_app":             map[string]any{"database": "blog"},
		"relation_get_own_app":         map[string]any{"tables": "posts"},
		"relation_get_missing":         "RelationNotFoundError",
		"relation_set":                 nil,
		"relation_set_app":             nil,
		"relation_set_missing":         "RelationNotFoundError",
		"relation_model_get":           map[string]any{"uuid": testModelUUID},
		"relation_model_get_missing":   "RelationNotFoundError",
		"config_get":                   map[string]any{"debug": true, "name": "blog", "port": 8080.0, "ratio": 0.5},
		"is_leader":                    true,
		"status_get_unit":              map[string]any{"status": "active", "message": "ready", "status-data": map[string]any{}},
		"status_get_app":               map[string]any{"status": "waiting", "message": "for units"},
		"status_set":                   nil,
		"status_set_app":               nil,
		"application_version_set":      nil,
		"juju_log":                     nil,
		"network_get":                  network,
		"network_get_relation":         network,
		"network_get_missing_relation": "RelationNotFoundError",
		"network_get_unknown":          `ModelError: ERROR no network config found for binding "nope"`,
		"planned_units":                1.0, // wordpress/1 is dying
		"opened_ports":                 []any{[]any{"icmp", nil}, []any{"tcp", 80.0}, []any{"udp", 8000.0}},
		"open_port":                    nil,
		"open_icmp":                    nil,
		"close_port":                   nil,
		"secret_get":                   "ModelError: ERROR secret-get is not supported by this controller (secrets are not supported)",
		"storage_list":                 "ModelError: ERROR storage-list is not supported by this controller (the local provider has no storage)",
		"credential_get": map[string]any{"type": "local", "name": "localhost", "region": "localhost", "endpoint": nil,
			"auth_type": "empty", "attributes": map[string]any{}, "is_controller_cloud": true},
		"state_set":         nil,
		"state_get":         map[string]any{"a": 1.0, "b": []any{1.0, 2.0}, "c": "x"},
		"state_delete":      nil,
		"state_get_missing": "KeyError: 'StoredStateData[_stored]'",
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: ops got %#v, want %#v", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unchecked %s: %#v", k, got[k])
		}
	}
	wantCalls := []string{
		"relation-set db:3 app=false map[a:1 b:]", // -r 3 is the hook's relation
		"relation-set db:3 app=true map[c:x y]",
		`status-set app=false active ""`,
		`status-set app=true blocked "need db"`,
		"version 1.0-rc1",
		`log INFO "--format=json looks like a flag"`,
		"open 8080/tcp",
		"open icmp",
		"close 53/udp",
		"state-set map[StoredStateData[_stored]:a: 1\nb: [1, 2]\nc: x\n]",
		"state-set map[StoredStateData[_stored]:]",
	}
	if calls := f.recorded(); !slices.Equal(calls, wantCalls) {
		t.Errorf("Context got\n%q\nwant\n%q", calls, wantCalls)
	}
}
