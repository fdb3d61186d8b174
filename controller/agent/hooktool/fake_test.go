package hooktool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
)

const testModelUUID = "8d3a3a26-5c7a-4b5e-9f43-0c2b1a9e7d11"

// fakeContext is a hook in db:3 of wordpress/0 (the leader), its remote unit mysql/0; it
// records writes. Relation ids may come as "db:3" or "3", as from the tools.
type fakeContext struct {
	mu          sync.Mutex
	relation    string
	remote      string
	address     string
	settings    map[string]map[string]map[string]string // relation id -> unit or app -> settings
	units       map[string][]string
	remoteApps  map[string]string
	ids         map[string][]string
	endpoints   []string
	status      Status
	appStatus   Status
	unitsStatus map[string]Status
	goal        *GoalState
	state       map[string]string
	logs        []string
	config      map[string]any
	ports       []string
	leader      bool
	leaderS     map[string]string
	// untrusted: the application is not trusted, so CloudSpec is refused as the controller does.
	untrusted bool
	// action: the fake runs an action (params, results, failure) rather than a hook.
	action      bool
	params      map[string]any
	results     map[string]any
	failMessage *string
	err         error         // returned by every call when set
	block       chan struct{} // calls wait on it (or the deadline) when set
	waiting     atomic.Int32  // calls waiting on block
}

func newFake() *fakeContext {
	return &fakeContext{
		relation: "db:3", remote: "mysql/0", address: "10.0.0.1",
		settings: map[string]map[string]map[string]string{
			"db:3": {
				"mysql/0":     {"host": "10.0.0.2", "user": "wp", "port": "3306"},
				"mysql/1":     {"host": "10.0.0.3"},
				"wordpress/0": {"private-address": "10.0.0.1"},
				"mysql":       {"database": "blog"},
				"wordpress":   {"tables": "posts"},
			},
			"db:4":     {"mysql/7": {"host": "10.0.0.9"}},
			"peers:0":  {"wordpress/1": {"ready": "yes"}},
			"db:12345": {},
		},
		units:      map[string][]string{"db:3": {"mysql/0", "mysql/1"}, "db:4": {"mysql/7"}, "peers:0": {"wordpress/1"}, "db:12345": nil},
		remoteApps: map[string]string{"db:3": "mysql", "db:4": "mysql", "peers:0": "wordpress", "db:12345": "mysql"},
		ids:        map[string][]string{"db": {"db:3", "db:4"}, "cache": nil, "peers": {"peers:0"}},
		endpoints:  []string{"db", "cache", "peers", "website", "juju-info", "admin-api"},
		status:     Status{Status: "active", Message: "ready"},
		appStatus:  Status{Status: "waiting", Message: "for units", Data: map[string]any{"pending": 1}},
		unitsStatus: map[string]Status{
			"wordpress/0": {Status: "active", Message: "ready"},
			"wordpress/1": {Status: "maintenance", Message: "installing"},
		},
		goal: &GoalState{
			Units: map[string]GoalStatus{
				"wordpress/0": {Status: "active", Since: "2025-01-02T03:04:05Z"},
				"wordpress/1": {Status: "dying", Since: "2025-01-02T03:04:06Z"},
			},
			Relations: map[string]map[string]GoalStatus{
				"db": {"mysql": {Status: "joined", Since: "2025-01-02T03:04:07Z"}, "mysql/0": {Status: "active"}},
			},
		},
		state:   map[string]string{"StoredStateData[_stored]": "{a: 1}\n", "plain": "x"},
		config:  map[string]any{"name": "blog", "debug": true, "port": 8080, "ratio": 0.5, "unset": nil},
		ports:   []string{"80/tcp", "8000-8005/udp", "icmp"},
		leader:  true,
		leaderS: map[string]string{"secret": "s3", "peer": "wordpress/1"},
	}
}

func (f *fakeContext) call(ctx context.Context, record string) error {
	if f.block != nil {
		f.waiting.Add(1)
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if record != "" {
		f.logs = append(f.logs, record)
	}
	return f.err
}

// resolve turns "3" or "db:3" into the relation's full id, or fails as a Context must.
func (f *fakeContext) resolve(id string) (string, error) {
	for full := range f.remoteApps {
		if full == id || strings.HasSuffix(full, ":"+id) && !strings.Contains(id, ":") {
			return full, nil
		}
	}
	return "", fmt.Errorf("relation %s: %w", id, ErrRelationNotFound)
}

func (f *fakeContext) UnitName() string       { return "wordpress/0" }
func (f *fakeContext) HookName() string       { return "db-relation-changed" }
func (f *fakeContext) ModelUUID() string      { return testModelUUID }
func (f *fakeContext) PrivateAddress() string { return f.address }
func (f *fakeContext) PublicAddress() string  { return "203.0.113.1" }
func (f *fakeContext) Endpoints() []string    { return f.endpoints }
func (f *fakeContext) Relation() (string, string) {
	return f.relation, f.remote
}

func (f *fakeContext) RelationIDs(ctx context.Context, endpoint string) ([]string, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	ids, ok := f.ids[endpoint]
	if !ok {
		return nil, fmt.Errorf("unknown endpoint %q", endpoint)
	}
	return ids, nil
}

func (f *fakeContext) RelationUnits(ctx context.Context, id string) ([]string, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	full, err := f.resolve(id)
	if err != nil {
		return nil, err
	}
	return f.units[full], nil
}

func (f *fakeContext) RelationRemoteApp(ctx context.Context, id string) (string, error) {
	if err := f.call(ctx, ""); err != nil {
		return "", err
	}
	full, err := f.resolve(id)
	if err != nil {
		return "", err
	}
	return f.remoteApps[full], nil
}

func (f *fakeContext) RelationGet(ctx context.Context, id, unit string, app bool) (map[string]string, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	full, err := f.resolve(id)
	if err != nil {
		return nil, err
	}
	if unit == "" {
		unit = "wordpress/0"
	}
	if app {
		unit, _, _ = strings.Cut(unit, "/")
		if unit == "wordpress" && !f.leader {
			return nil, fmt.Errorf("permission denied: only the leader reads its application's settings")
		}
	}
	return f.settings[full][unit], nil
}

func (f *fakeContext) RelationSet(ctx context.Context, id string, app bool, values map[string]string) error {
	if _, err := f.resolve(id); err != nil {
		return err
	}
	if app && !f.leader {
		return ErrNotLeader
	}
	return f.call(ctx, fmt.Sprintf("relation-set %s app=%v %v", id, app, values))
}

func (f *fakeContext) StatusSet(ctx context.Context, app bool, status, message string) error {
	if app && !f.leader {
		return ErrNotLeader
	}
	return f.call(ctx, fmt.Sprintf("status-set app=%v %s %q", app, status, message))
}

func (f *fakeContext) StatusGet(ctx context.Context) (Status, error) {
	return f.status, f.call(ctx, "")
}

func (f *fakeContext) ApplicationStatus(ctx context.Context) (Status, map[string]Status, error) {
	if err := f.call(ctx, ""); err != nil {
		return Status{}, nil, err
	}
	if !f.leader {
		return Status{}, nil, ErrNotLeader
	}
	return f.appStatus, f.unitsStatus, nil
}

func (f *fakeContext) ApplicationVersionSet(ctx context.Context, version string) error {
	return f.call(ctx, "version "+version)
}

func (f *fakeContext) Log(ctx context.Context, level, message string) error {
	return f.call(ctx, fmt.Sprintf("log %s %q", level, message))
}

func (f *fakeContext) Config(ctx context.Context) (map[string]any, error) {
	return f.config, f.call(ctx, "")
}

func (f *fakeContext) OpenPort(ctx context.Context, port string) error {
	return f.call(ctx, "open "+port)
}

func (f *fakeContext) ClosePort(ctx context.Context, port string) error {
	return f.call(ctx, "close "+port)
}

func (f *fakeContext) OpenedPorts(ctx context.Context) ([]string, error) {
	return f.ports, f.call(ctx, "")
}

func (f *fakeContext) IsLeader(ctx context.Context) (bool, error) {
	return f.leader, f.call(ctx, "")
}

func (f *fakeContext) LeaderGet(ctx context.Context) (map[string]string, error) {
	return f.leaderS, f.call(ctx, "")
}

func (f *fakeContext) LeaderSet(ctx context.Context, values map[string]string) error {
	return f.call(ctx, fmt.Sprintf("leader-set %v", values))
}

func (f *fakeContext) GoalState(ctx context.Context) (*GoalState, error) {
	return f.goal, f.call(ctx, "")
}

func (f *fakeContext) CloudSpec(ctx context.Context) (*CloudSpec, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	if f.untrusted {
		return nil, errors.New("permission denied")
	}
	return &CloudSpec{Type: "local", Name: "localhost", Region: "localhost",
		Credential: &CloudCredential{AuthType: "empty"}, IsControllerCloud: true}, nil
}

func (f *fakeContext) CharmState(ctx context.Context) (map[string]string, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.state), nil
}

func (f *fakeContext) SetCharmState(ctx context.Context, values map[string]string) error {
	if err := f.call(ctx, fmt.Sprintf("state-set %v", values)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == nil {
		f.state = map[string]string{}
	}
	for k, v := range values {
		if v == "" {
			delete(f.state, k)
		} else {
			f.state[k] = v
		}
	}
	return nil
}

// fixedInterfaces makes network-get see the host's interfaces as eth0 on 10.0.0.0/24, for the
// duration of a test.
func fixedInterfaces(t interface{ Cleanup(func()) }) {
	saved := findInterface
	findInterface = func(ip net.IP) (hostInterface, bool) {
		if _, subnet, _ := net.ParseCIDR("10.0.0.0/24"); subnet.Contains(ip) {
			return hostInterface{"eth0", "00:16:3e:aa:bb:cc", "10.0.0.0/24"}, true
		}
		return hostInterface{}, false
	}
	t.Cleanup(func() { findInterface = saved })
}

func (f *fakeContext) ActionParams() (map[string]any, error) {
	if !f.action {
		return nil, ErrNotAction
	}
	return f.params, f.call(context.Background(), "")
}

func (f *fakeContext) SetActionResult(keys []string, value string) error {
	if !f.action {
		return ErrNotAction
	}
	if err := f.call(context.Background(), fmt.Sprintf("action-set %s=%s", strings.Join(keys, "."), value)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.results == nil {
		f.results = map[string]any{}
	}
	m := f.results
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
	return nil
}

func (f *fakeContext) FailAction(message string) error {
	if !f.action {
		return ErrNotAction
	}
	f.mu.Lock()
	f.failMessage = &message
	f.mu.Unlock()
	return f.call(context.Background(), fmt.Sprintf("action-fail %q", message))
}

func (f *fakeContext) LogAction(ctx context.Context, message string) error {
	if !f.action {
		return ErrNotAction
	}
	return f.call(ctx, fmt.Sprintf("action-log %q", message))
}

// ResourceGet: test-file has a copy on the unit; any other resource was never uploaded.
func (f *fakeContext) ResourceGet(ctx context.Context, name string) (string, error) {
	if err := f.call(ctx, "resource-get "+name); err != nil {
		return "", err
	}
	if name != "test-file" {
		return "", fmt.Errorf("resource %q not found", name)
	}
	return "/var/lib/juju/agents/unit-wordpress-0/resources/test-file/test-file.tar", nil
}
