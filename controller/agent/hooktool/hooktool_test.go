package hooktool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary act as a hook tool when run under a tool's name, as jujud does.
func TestMain(m *testing.M) {
	if code, ran := RunIfTool(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// fakeContext is a hook in db:3 of wordpress/0, its remote unit mysql/0; it records writes.
type fakeContext struct {
	mu       sync.Mutex
	relation string
	remote   string
	settings map[string]map[string]map[string]string // relation id -> unit -> settings
	units    map[string][]string
	ids      map[string][]string
	status   [2]string
	version  string
	logs     []string
	config   map[string]any
	ports    []string
	leader   bool
	leaderS  map[string]string
	err      error         // returned by every call when set
	block    chan struct{} // calls wait on it (or the deadline) when set
	waiting  atomic.Int32  // calls waiting on block
}

func newFake() *fakeContext {
	return &fakeContext{
		relation: "db:3", remote: "mysql/0",
		settings: map[string]map[string]map[string]string{
			"db:3": {
				"mysql/0":     {"host": "10.0.0.2", "user": "wp", "port": "3306"},
				"mysql/1":     {"host": "10.0.0.3"},
				"wordpress/0": {"private-address": "10.0.0.1"},
			},
			"db:4": {"mysql/7": {"host": "10.0.0.9"}},
		},
		units:   map[string][]string{"db:3": {"mysql/0", "mysql/1"}, "db:4": {"mysql/7"}},
		ids:     map[string][]string{"db": {"db:3", "db:4"}, "cache": nil},
		status:  [2]string{"active", "ready"},
		config:  map[string]any{"name": "blog", "debug": true, "port": 8080, "ratio": 0.5, "unset": nil},
		ports:   []string{"80/tcp", "8000-8005/udp"},
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

func (f *fakeContext) UnitName() string       { return "wordpress/0" }
func (f *fakeContext) HookName() string       { return "db-relation-changed" }
func (f *fakeContext) PrivateAddress() string { return "10.0.0.1" }
func (f *fakeContext) PublicAddress() string  { return "203.0.113.1" }
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
	units, ok := f.units[id]
	if !ok {
		return nil, fmt.Errorf("relation %q not found", id)
	}
	return units, nil
}

func (f *fakeContext) RelationGet(ctx context.Context, id, unit string) (map[string]string, error) {
	if err := f.call(ctx, ""); err != nil {
		return nil, err
	}
	rel, ok := f.settings[id]
	if !ok {
		return nil, fmt.Errorf("relation %q not found", id)
	}
	if unit == "" {
		unit = "wordpress/0"
	}
	return rel[unit], nil
}

func (f *fakeContext) RelationSet(ctx context.Context, id string, values map[string]string) error {
	return f.call(ctx, fmt.Sprintf("relation-set %s %v", id, values))
}

func (f *fakeContext) StatusSet(ctx context.Context, app bool, status, message string) error {
	return f.call(ctx, fmt.Sprintf("status-set app=%v %s %q", app, status, message))
}

func (f *fakeContext) StatusGet(ctx context.Context, app bool) (string, string, error) {
	if err := f.call(ctx, ""); err != nil {
		return "", "", err
	}
	if app {
		return "waiting", "for units", nil
	}
	return f.status[0], f.status[1], nil
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

func (f *fakeContext) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.logs)
}

// startServer serves hook tools on a real abstract socket, with c registered as "ctx-1".
func startServer(t *testing.T, c Context) *Server {
	t.Helper()
	return startServerTimeout(t, c, RequestTimeout)
}

func startServerTimeout(t *testing.T, c Context, timeout time.Duration) *Server {
	t.Helper()
	s, err := NewServer(SocketAddr("wordpress/0"))
	if err != nil {
		t.Fatal(err)
	}
	s.timeout = timeout
	s.Register("ctx-1", c)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a tool through Main against s, as a hook with JUJU_CONTEXT_ID=ctx-1 would.
func run(s *Server, stdin string, name string, args ...string) result {
	env := map[string]string{"JUJU_AGENT_SOCKET": s.Addr(), "JUJU_CONTEXT_ID": "ctx-1"}
	var out, errOut bytes.Buffer
	code := Main(name, args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

type toolCase struct {
	name   string
	args   []string
	stdin  string
	setup  func(f *fakeContext)
	want   result
	record []string // what the Context got, when checked
}

func runCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			f := newFake()
			if tc.setup != nil {
				tc.setup(f)
			}
			s := startServer(t, f)
			got := run(s, tc.stdin, tc.name, tc.args...)
			if got != tc.want {
				t.Errorf("got\n%#v\nwant\n%#v", got, tc.want)
			}
			if tc.record != nil && !slices.Equal(f.recorded(), tc.record) {
				t.Errorf("Context got %q, want %q", f.recorded(), tc.record)
			}
		})
	}
}

func ok(stdout string) result { return result{stdout: stdout} }

func usage(name, msg, usage string) result {
	return result{stderr: "ERROR " + msg + "\nUsage: " + name + " " + usage + "\n", code: 2}
}

func failed(msg string) result { return result{stderr: "ERROR " + msg + "\n", code: 1} }

func notRelationHook(f *fakeContext) { f.relation, f.remote = "", "" }

func TestRelationGet(t *testing.T) {
	const u = "[options] [<key>|-] [<unit>]"
	runCases(t, []toolCase{
		{name: "relation-get", args: []string{"host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"missing"}, want: ok("")},
		{name: "relation-get", want: ok("host: 10.0.0.2\nport: \"3306\"\nuser: wp\n")},
		{name: "relation-get", args: []string{"-"}, want: ok("host: 10.0.0.2\nport: \"3306\"\nuser: wp\n")},
		{name: "relation-get", args: []string{"host", "mysql/1"}, want: ok("10.0.0.3\n")},
		{name: "relation-get", args: []string{"-", "wordpress/0"}, want: ok("private-address: 10.0.0.1\n")},
		{name: "relation-get", args: []string{"-r", "db:4", "host", "mysql/7"}, want: ok("10.0.0.9\n")},
		{name: "relation-get", args: []string{"-r", "3", "host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"--relation=db:3", "--format=json"}, want: ok(`{"host":"10.0.0.2","port":"3306","user":"wp"}` + "\n")},
		{name: "relation-get", args: []string{"--format", "json", "user"}, want: ok(`"wp"` + "\n")},
		{name: "relation-get", args: []string{"--format", "json", "missing"}, want: ok("null\n")},
		{name: "relation-get", args: []string{"--format", "yaml", "host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"-", "mysql/9"}, want: ok("{}\n")},
		// The remote unit is the default only in the hook's own relation.
		{name: "relation-get", args: []string{"-r", "db:4", "host"}, want: usage("relation-get", "no unit id specified", u)},
		{name: "relation-get", args: []string{"-r", "db:3", "host"}, setup: notRelationHook, want: usage("relation-get", "no unit id specified", u)},
		{name: "relation-get", setup: notRelationHook, want: usage("relation-get", "no relation id specified", u)},
		{name: "relation-get", args: []string{"--app", "x"}, want: usage("relation-get", "application data is not supported", u)},
		{name: "relation-get", args: []string{"-r", "db:x"}, want: usage("relation-get", `invalid relation id "db:x"`, u)},
		{name: "relation-get", args: []string{"-r", ":3"}, want: usage("relation-get", `invalid relation id ":3"`, u)},
		{name: "relation-get", args: []string{"a", "b", "c"}, want: usage("relation-get", `unrecognized args: ["c"]`, u)},
		{name: "relation-get", args: []string{"--format", "xml"}, want: usage("relation-get", `invalid format "xml", expected one of [smart json yaml]`, u)},
		{name: "relation-get", args: []string{"--bogus"}, want: usage("relation-get", "unknown flag: --bogus", u)},
		{name: "relation-get", args: []string{"-r", "db:9", "x", "mysql/0"}, want: failed(`relation "db:9" not found`)},
	})
}

func TestRelationSet(t *testing.T) {
	const u = "[options] <key>=<value> ..."
	runCases(t, []toolCase{
		{name: "relation-set", args: []string{"a=1", "b=", "c=x=y"}, want: ok(""), record: []string{"relation-set db:3 map[a:1 b: c:x=y]"}},
		{name: "relation-set", args: []string{"-r", "4", "a=1"}, want: ok(""), record: []string{"relation-set 4 map[a:1]"}},
		{name: "relation-set", args: []string{"--file", "-", "b=override"}, stdin: "a: 1\nb: two\nc: null\nd: true\n",
			want: ok(""), record: []string{"relation-set db:3 map[a:1 b:override c: d:true]"}},
		{name: "relation-set", args: []string{"--file=-"}, stdin: "- a\n", want: failed("reading --file -: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]string")},
		{name: "relation-set", args: []string{"x"}, want: usage("relation-set", `expected "key=value", got "x"`, u)},
		{name: "relation-set", args: []string{"=x"}, want: usage("relation-set", `expected "key=value", got "=x"`, u)},
		{name: "relation-set", args: []string{"--app", "a=1"}, want: usage("relation-set", "application data is not supported", u)},
		{name: "relation-set", args: []string{"a=1"}, setup: notRelationHook, want: usage("relation-set", "no relation id specified", u)},
		// L-R3: the Context refuses writes in -departed and -broken hooks; the tool says why.
		{name: "relation-set", args: []string{"a=1"}, setup: func(f *fakeContext) {
			f.err = errors.New(`cannot write relation settings in the "db-relation-departed" hook: the relation is departing`)
		}, want: failed(`cannot write relation settings in the "db-relation-departed" hook: the relation is departing`)},
	})
}

func TestRelationIDsAndList(t *testing.T) {
	runCases(t, []toolCase{
		{name: "relation-ids", want: ok("db:3\ndb:4\n")},
		{name: "relation-ids", args: []string{"cache"}, want: ok("")},
		{name: "relation-ids", args: []string{"--format", "json", "cache"}, want: ok("[]\n")},
		{name: "relation-ids", args: []string{"--format=json"}, want: ok(`["db:3","db:4"]` + "\n")},
		{name: "relation-ids", args: []string{"--format=yaml", "db"}, want: ok("- db:3\n- db:4\n")},
		{name: "relation-ids", setup: notRelationHook, want: usage("relation-ids", "no endpoint specified", "[options] [<endpoint>]")},
		{name: "relation-ids", args: []string{"nope"}, want: failed(`unknown endpoint "nope"`)},
		{name: "relation-list", want: ok("mysql/0\nmysql/1\n")},
		{name: "relation-list", args: []string{"-r", "db:4", "--format", "json"}, want: ok(`["mysql/7"]` + "\n")},
		{name: "relation-list", args: []string{"x"}, want: usage("relation-list", `unrecognized args: ["x"]`, "[options]")},
		{name: "relation-list", setup: notRelationHook, want: usage("relation-list", "no relation id specified", "[options]")},
	})
}

func TestStatus(t *testing.T) {
	const u = "[options] <maintenance|blocked|waiting|active> [<message>]"
	runCases(t, []toolCase{
		{name: "status-set", args: []string{"maintenance", "installing software"}, want: ok(""), record: []string{`status-set app=false maintenance "installing software"`}},
		{name: "status-set", args: []string{"--application", "active"}, want: ok(""), record: []string{`status-set app=true active ""`}},
		{name: "status-set", args: []string{"error"}, want: usage("status-set", `invalid status "error", expected one of [maintenance blocked waiting active]`, u)},
		{name: "status-set", want: usage("status-set", "no status specified", u)},
		{name: "status-set", args: []string{"active", "a", "b"}, want: usage("status-set", `unrecognized args: ["b"]`, u)},
		{name: "status-set", args: []string{"blocked", "x"}, setup: func(f *fakeContext) { f.err = errors.New("this unit is not the leader") }, want: failed("this unit is not the leader")},
		{name: "status-get", want: ok("active\n")},
		{name: "status-get", args: []string{"--application"}, want: ok("waiting\n")},
		{name: "status-get", args: []string{"--format", "json"}, want: ok(`"active"` + "\n")},
		{name: "status-get", args: []string{"--include-data"}, want: ok("message: ready\nstatus: active\nstatus-data: {}\n")},
		{name: "status-get", args: []string{"--include-data", "--format=json"}, want: ok(`{"message":"ready","status":"active","status-data":{}}` + "\n")},
		{name: "status-get", args: []string{"x"}, want: usage("status-get", `unrecognized args: ["x"]`, "[options]")},
		{name: "application-version-set", args: []string{"1.2.3"}, want: ok(""), record: []string{"version 1.2.3"}},
		{name: "application-version-set", want: usage("application-version-set", "no version specified", "<version>")},
		{name: "application-version-set", args: []string{"1", "2"}, want: usage("application-version-set", `unrecognized args: ["2"]`, "<version>")},
	})
}

func TestJujuLog(t *testing.T) {
	const u = "[options] <message> ..."
	runCases(t, []toolCase{
		{name: "juju-log", args: []string{"hello", "world"}, want: ok(""), record: []string{`log INFO "hello world"`}},
		{name: "juju-log", args: []string{"-l", "warn", "careful"}, want: ok(""), record: []string{`log WARNING "careful"`}},
		{name: "juju-log", args: []string{"--log-level=error", "bad"}, want: ok(""), record: []string{`log ERROR "bad"`}},
		{name: "juju-log", args: []string{"--debug", "details"}, want: ok(""), record: []string{`log DEBUG "details"`}},
		{name: "juju-log", args: []string{"-l", "TRACE", "--", "-x"}, want: ok(""), record: []string{`log TRACE "-x"`}},
		{name: "juju-log", args: []string{"-l", "loud", "x"}, want: usage("juju-log", `invalid log level "loud", expected one of [TRACE DEBUG INFO WARNING ERROR]`, u)},
		{name: "juju-log", want: usage("juju-log", "no message specified", u)},
	})
}

func TestConfigGet(t *testing.T) {
	const u = "[options] [<key>]"
	runCases(t, []toolCase{
		{name: "config-get", args: []string{"name"}, want: ok("blog\n")},
		{name: "config-get", args: []string{"debug"}, want: ok("true\n")},
		{name: "config-get", args: []string{"port"}, want: ok("8080\n")},
		{name: "config-get", args: []string{"ratio"}, want: ok("0.5\n")},
		{name: "config-get", args: []string{"unset"}, want: ok("")},
		{name: "config-get", args: []string{"nope"}, want: ok("")},
		{name: "config-get", args: []string{"--format=json", "debug"}, want: ok("true\n")},
		{name: "config-get", args: []string{"--format=json", "unset"}, want: ok("null\n")},
		{name: "config-get", want: ok("debug: true\nname: blog\nport: 8080\nratio: 0.5\n")},
		{name: "config-get", args: []string{"-a"}, want: ok("debug: true\nname: blog\nport: 8080\nratio: 0.5\nunset: null\n")},
		{name: "config-get", args: []string{"--format", "json"}, want: ok(`{"debug":true,"name":"blog","port":8080,"ratio":0.5}` + "\n")},
		{name: "config-get", args: []string{"--all", "name"}, want: usage("config-get", "cannot use --all together with a key", u)},
		{name: "config-get", args: []string{"a", "b"}, want: usage("config-get", `unrecognized args: ["b"]`, u)},
	})
}

func TestUnitGet(t *testing.T) {
	const u = "[options] private-address|public-address"
	runCases(t, []toolCase{
		{name: "unit-get", args: []string{"private-address"}, want: ok("10.0.0.1\n")},
		{name: "unit-get", args: []string{"public-address"}, want: ok("203.0.113.1\n")},
		{name: "unit-get", args: []string{"--format=json", "public-address"}, want: ok(`"203.0.113.1"` + "\n")},
		{name: "unit-get", args: []string{"machine-id"}, want: usage("unit-get", `unknown setting "machine-id"`, u)},
		{name: "unit-get", want: usage("unit-get", "no setting specified", u)},
	})
}

func TestPorts(t *testing.T) {
	const u = "<port>[/<protocol>] | <from>-<to>[/<protocol>] | icmp"
	runCases(t, []toolCase{
		{name: "open-port", args: []string{"80"}, want: ok(""), record: []string{"open 80/tcp"}},
		{name: "open-port", args: []string{"53/UDP"}, want: ok(""), record: []string{"open 53/udp"}},
		{name: "open-port", args: []string{"8000-8005/udp"}, want: ok(""), record: []string{"open 8000-8005/udp"}},
		{name: "open-port", args: []string{"443-443"}, want: ok(""), record: []string{"open 443/tcp"}},
		{name: "open-port", args: []string{"ICMP"}, want: ok(""), record: []string{"open icmp"}},
		{name: "close-port", args: []string{"1-65535/tcp"}, want: ok(""), record: []string{"close 1-65535/tcp"}},
		{name: "open-port", args: []string{"0"}, want: usage("open-port", `invalid port "0", expected a port or range within 1-65535`, u)},
		{name: "open-port", args: []string{"65536"}, want: usage("open-port", `invalid port "65536", expected a port or range within 1-65535`, u)},
		{name: "open-port", args: []string{"80/sctp"}, want: usage("open-port", `invalid protocol "sctp" in "80/sctp", expected tcp or udp`, u)},
		{name: "open-port", args: []string{"icmp/tcp"}, want: usage("open-port", `invalid port "icmp/tcp", expected a port or range within 1-65535`, u)},
		{name: "close-port", args: []string{"90-80"}, want: usage("close-port", `invalid port range "90-80": 90 is greater than 80`, u)},
		{name: "close-port", args: []string{"-"}, want: usage("close-port", `invalid port "-", expected a port or range within 1-65535`, u)},
		{name: "open-port", want: usage("open-port", "no port or range specified", u)},
		{name: "open-port", args: []string{"80", "81"}, want: usage("open-port", `unrecognized args: ["81"]`, u)},
		{name: "opened-ports", want: ok("80/tcp\n8000-8005/udp\n")},
		{name: "opened-ports", args: []string{"--format=yaml"}, want: ok("- 80/tcp\n- 8000-8005/udp\n")},
		{name: "opened-ports", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.ports = nil }, want: ok("[]\n")},
	})
}

func TestLeadership(t *testing.T) {
	notLeader := func(f *fakeContext) { f.leader = false }
	runCases(t, []toolCase{
		{name: "is-leader", want: ok("True\n")},
		{name: "is-leader", setup: notLeader, want: ok("False\n")},
		{name: "is-leader", args: []string{"--format=json"}, want: ok("true\n")},
		{name: "is-leader", args: []string{"--format", "yaml"}, setup: notLeader, want: ok("false\n")},
		{name: "leader-get", want: ok("peer: wordpress/1\nsecret: s3\n")},
		{name: "leader-get", args: []string{"secret"}, want: ok("s3\n")},
		{name: "leader-get", args: []string{"missing"}, want: ok("")},
		{name: "leader-get", args: []string{"--format=json", "-"}, want: ok(`{"peer":"wordpress/1","secret":"s3"}` + "\n")},
		{name: "leader-get", args: []string{"a", "b"}, want: usage("leader-get", `unrecognized args: ["b"]`, "[options] [<key>|-]")},
		{name: "leader-set", args: []string{"a=1", "b="}, want: ok(""), record: []string{"leader-set map[a:1 b:]"}},
		{name: "leader-set", args: []string{"a"}, want: usage("leader-set", `expected "key=value", got "a"`, "<key>=<value> ...")},
		{name: "leader-set", args: []string{"a=1"}, setup: func(f *fakeContext) { f.err = errors.New("this unit is not the leader") }, want: failed("this unit is not the leader")},
	})
}

// Every tool answers --help and -h with its usage and purpose, without calling the Context.
func TestHelp(t *testing.T) {
	f := newFake()
	f.err = errors.New("the Context must not be called")
	s := startServer(t, f)
	for _, name := range Names() {
		for _, flag := range []string{"--help", "-h"} {
			got := run(s, "", name, flag)
			want := "Usage: " + name + " " + tools[name].usage + "\n\n" + tools[name].purpose + "\n"
			if got.code != 0 || got.stderr != "" || !strings.HasPrefix(got.stdout, want) || !strings.Contains(got.stdout, "-h, --help") {
				t.Errorf("%s %s: %#v", name, flag, got)
			}
		}
	}
	if len(Names()) != 16 || !IsTool("relation-get") || IsTool("jujud") {
		t.Errorf("Names() = %q", Names())
	}
}

func TestServerRefusesUnknownContext(t *testing.T) {
	s := startServer(t, newFake())
	env := map[string]string{"JUJU_AGENT_SOCKET": s.Addr(), "JUJU_CONTEXT_ID": "stale"}
	var out, errOut bytes.Buffer
	code := Main("relation-get", nil, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	want := "ERROR no running hook has context id \"stale\": hook tools work only while their hook runs\n"
	if code != 1 || out.String() != "" || errOut.String() != want {
		t.Errorf("got %d %q %q", code, out.String(), errOut.String())
	}

	// A finished hook's id stops working.
	s.Unregister("ctx-1")
	if got := run(s, "", "is-leader"); got.code != 1 || !strings.Contains(got.stderr, `context id "ctx-1"`) {
		t.Errorf("after Unregister: %#v", got)
	}
}

func TestMainOutsideHook(t *testing.T) {
	s := startServer(t, newFake())
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "ERROR JUJU_AGENT_SOCKET is not set: hook tools run only inside a hook\n"},
		{map[string]string{"JUJU_AGENT_SOCKET": s.Addr()}, "ERROR JUJU_CONTEXT_ID is not set: hook tools run only inside a hook\n"},
	} {
		var out, errOut bytes.Buffer
		code := Main("is-leader", nil, func(k string) string { return tc.env[k] }, strings.NewReader(""), &out, &errOut)
		if code != 1 || errOut.String() != tc.want {
			t.Errorf("got %d %q, want %q", code, errOut.String(), tc.want)
		}
	}
	env := map[string]string{"JUJU_AGENT_SOCKET": "@jujud-nobody-listens", "JUJU_CONTEXT_ID": "x"}
	var errOut bytes.Buffer
	code := Main("is-leader", nil, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &errOut)
	if code != 1 || !strings.HasPrefix(errOut.String(), "ERROR cannot reach the unit agent: ") {
		t.Errorf("no server: %d %q", code, errOut.String())
	}
}

// A Context call that hangs ends at the server's deadline with an error, not a hung hook.
func TestServerDeadline(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	s := startServerTimeout(t, f, 200*time.Millisecond)
	start := time.Now()
	got := run(s, "", "is-leader")
	if got != failed("context deadline exceeded") || time.Since(start) > 5*time.Second {
		t.Errorf("got %#v after %v", got, time.Since(start))
	}
}

func TestServerConcurrent(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	s := startServer(t, f)
	const n = 20
	results := make(chan result, n)
	for i := range n {
		go func() { results <- run(s, "", "juju-log", fmt.Sprint("message ", i)) }()
	}
	// All n calls are in flight at once before any is let through.
	for deadline := time.Now().Add(10 * time.Second); f.waiting.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d calls in flight", f.waiting.Load(), n)
		}
	}
	close(f.block)
	for range n {
		if got := <-results; got != ok("") {
			t.Errorf("got %#v", got)
		}
	}
	if len(f.recorded()) != n {
		t.Errorf("recorded %d calls", len(f.recorded()))
	}
}

func TestServerServeEndsWithContext(t *testing.T) {
	s, err := NewServer(filepath.Join(t.TempDir(), "agent.socket"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	s.Register("ctx-1", newFake())
	if got := run(s, "", "unit-get", "private-address"); got != ok("10.0.0.1\n") {
		t.Errorf("path socket: %#v", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSocketAddr(t *testing.T) {
	a, b := SocketAddr("wordpress/0"), SocketAddr("wordpress/0")
	if a == b || !strings.HasPrefix(a, "@jujud-wordpress-0-") {
		t.Errorf("SocketAddr: %q %q", a, b)
	}
	if long := SocketAddr(strings.Repeat("x", 300) + "/0"); len(long) > 107 {
		t.Errorf("address of %d bytes", len(long))
	}
	if NewContextID() == NewContextID() || len(NewContextID()) != 32 {
		t.Error("context ids repeat or are short")
	}
}

func TestInstallTools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(dir, "/bin/old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "juju-log"), []byte("stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // replaces stale entries, then changes nothing
		if err := InstallTools(dir, "/usr/bin/jujud"); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || target != "/usr/bin/jujud" {
			t.Errorf("%s -> %q, %v", e.Name(), target, err)
		}
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("installed %q", names)
	}
}

// The tools run as real processes through real symlinks: this test binary acts as jujud (TestMain).
func TestToolsThroughSymlinks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testThroughSymlinks(t, exe)
}

// The same with jujud itself, checking that its main runs the tools.
func TestJujudRunsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jujud")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	jujud := filepath.Join(t.TempDir(), "jujud")
	if out, err := exec.Command(goTool, "build", "-o", jujud, "github.com/jujuclone/juju/cmd/jujud").CombinedOutput(); err != nil {
		t.Fatalf("building jujud: %v\n%s", err, out)
	}
	testThroughSymlinks(t, jujud)
}

func testThroughSymlinks(t *testing.T, binary string) {
	f := newFake()
	s := startServer(t, f)
	toolsDir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(toolsDir, binary); err != nil {
		t.Fatal(err)
	}
	hookDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hookDir, "settings.yaml"), []byte("from-file: yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exec1 := func(stdin, id, name string, args ...string) result {
		cmd := exec.Command(filepath.Join(toolsDir, name), args...)
		cmd.Dir = hookDir
		cmd.Env = []string{"JUJU_AGENT_SOCKET=" + s.Addr(), "JUJU_CONTEXT_ID=" + id}
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running %s: %v", name, err)
		}
		return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
	}
	for _, tc := range []struct {
		stdin, id, name string
		args            []string
		want            result
	}{
		{"", "ctx-1", "relation-get", []string{"host"}, ok("10.0.0.2\n")},
		{"", "ctx-1", "is-leader", nil, ok("True\n")},
		{"", "ctx-1", "status-set", []string{"bogus"}, usage("status-set", `invalid status "bogus", expected one of [maintenance blocked waiting active]`, tools["status-set"].usage)},
		{"k: v\n", "ctx-1", "relation-set", []string{"--file", "-"}, ok("")},
		{"", "ctx-1", "relation-set", []string{"--file", "settings.yaml"}, ok("")},
		{"", "ctx-1", "relation-set", []string{"--file", "missing.yaml"}, result{stderr: "ERROR reading --file: open missing.yaml: no such file or directory\n", code: 1}},
		{"", "gone", "is-leader", nil, failed(`no running hook has context id "gone": hook tools work only while their hook runs`)},
	} {
		if got := exec1(tc.stdin, tc.id, tc.name, tc.args...); got != tc.want {
			t.Errorf("%s %q: got %#v, want %#v", tc.name, tc.args, got, tc.want)
		}
	}
	want := []string{"relation-set db:3 map[k:v]", "relation-set db:3 map[from-file:yes]"}
	if got := f.recorded(); !slices.Equal(got, want) {
		t.Errorf("Context got %q, want %q", got, want)
	}
}

// No input makes a tool panic, also against a Context that returns nothing at all.
func TestToolsNeverPanic(t *testing.T) {
	odd := [][]string{nil, {""}, {"-"}, {"--"}, {"="}, {"=", "="}, {"-r"}, {"-r", ""}, {"-r", ":"}, {"-r", "db:"},
		{"-r", "-1"}, {"--format"}, {"--format", ""}, {"--file"}, {"--file", "-"}, {"-l", ""}, {"/"}, {"-/tcp"},
		{"1-"}, {"-1"}, {"80/"}, {"9999999999999999999999"}, {"--all", ""}, {"\x00"}, {"a=b", "c"}}
	empty := &fakeContext{settings: map[string]map[string]map[string]string{}}
	for _, name := range Names() {
		for _, args := range odd {
			for _, c := range []*fakeContext{newFake(), empty} {
				_, stderr, code := runTool(context.Background(), c, name, args, []byte("{not yaml"))
				if code < 0 || code > 2 || (code != 0) != (len(stderr) > 0) {
					t.Errorf("%s %q: code %d, stderr %q", name, args, code, stderr)
				}
			}
		}
	}
	if _, stderr, code := runTool(context.Background(), newFake(), "jujud", nil, nil); code != 1 || string(stderr) != "ERROR unknown hook tool \"jujud\"\n" {
		t.Errorf("unknown tool: %d %q", code, stderr)
	}
}

type panickingContext struct{ *fakeContext }

func (panickingContext) IsLeader(context.Context) (bool, error) { panic("boom") }

// A broken request or a panicking Context gets an error answer; the server keeps serving.
func TestServerSurvivesBadCalls(t *testing.T) {
	s := startServer(t, panickingContext{newFake()})
	if got := run(s, "", "is-leader"); got != failed("internal error in the unit agent: boom") {
		t.Errorf("panic: %#v", got)
	}
	conn, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("not json\n")); err != nil {
		t.Fatal(err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil || resp.Code != 1 ||
		!strings.HasPrefix(string(resp.Stderr), "ERROR reading the hook tool's request: ") {
		t.Errorf("garbage: %#v, %v", resp, err)
	}
	if got := run(s, "", "unit-get", "private-address"); got != ok("10.0.0.1\n") {
		t.Errorf("after bad calls: %#v", got)
	}
}
