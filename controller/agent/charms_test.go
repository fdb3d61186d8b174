package agent_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/core/charm"
)

// The sample charms in testdata/charms run here against fake hook tools, one sh script under
// every tool's name: each call appends "<tool> <args>" to $FAKE/calls, and the tools that
// answer read files under $FAKE (config/<key>, relation/<unit>/<key>, units, leader/<key>).
const fakeTool = `#!/bin/sh
echo "${0##*/} $*" >>"$FAKE/calls"
case ${0##*/} in
config-get)
	if [ "$1" = --all ]; then
		for f in "$FAKE"/config/*; do [ -f "$f" ] && echo "${f##*/}: $(cat "$f")"; done
	else
		cat "$FAKE/config/$1" 2>/dev/null || true
	fi
	;;
unit-get) echo 10.0.0.9 ;;
leader-get) cat "$FAKE/leader/$1" 2>/dev/null || true ;;
relation-list) cat "$FAKE/units" 2>/dev/null || true ;;
relation-get)
	[ "$1" != -r ] || shift 2
	cat "$FAKE/relation/${2:-$JUJU_REMOTE_UNIT}/$1" 2>/dev/null || true
	;;
esac
`

var charmsDir = filepath.Join("..", "..", "testdata", "charms")

var sampleCharms = []string{"haproxy", "logging", "mysql", "wordpress"}

// lifecycleHooks: every sample charm has them all, so tests can make any of them fail or hang.
var lifecycleHooks = []string{"install", "leader-elected", "config-changed", "start", "stop", "remove"}

func fakeTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range hooktool.Names() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fakeTool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hookRun is one hook of a copy of a sample charm, run as the unit agent would run it.
type hookRun struct {
	charm, hook string
	remote      string            // "app/n" for JUJU_REMOTE_UNIT; just "app" in -broken hooks
	fake        map[string]string // files the fake tools answer from
	state       map[string]string // files in the charm directory before the hook
}

// start copies the charm and starts the hook; fake is $FAKE.
func (r hookRun) start(ctx context.Context, t *testing.T, tools string) (cmd *exec.Cmd, dir, fake string, stderr *bytes.Buffer) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), r.charm)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(charmsDir, r.charm))); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, r.state)
	fake = t.TempDir()
	writeFiles(t, fake, r.fake)
	cmd = exec.CommandContext(ctx, filepath.Join(dir, "hooks", r.hook))
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	cmd.Env = []string{
		"PATH=" + tools + ":/usr/bin:/bin", "FAKE=" + fake,
		"JUJU_UNIT_NAME=" + r.charm + "/0", "JUJU_HOOK_NAME=" + r.hook,
		"JUJU_CHARM_DIR=" + dir, "CHARM_DIR=" + dir,
	}
	if endpoint, _, ok := strings.Cut(r.hook, "-relation-"); ok {
		app, _, _ := strings.Cut(r.remote, "/")
		cmd.Env = append(cmd.Env, "JUJU_RELATION="+endpoint, "JUJU_RELATION_ID="+endpoint+":7", "JUJU_REMOTE_APP="+app)
		if strings.Contains(r.remote, "/") {
			cmd.Env = append(cmd.Env, "JUJU_REMOTE_UNIT="+r.remote)
		}
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, dir, fake, stderr
}

// calls returns the tool calls the hook made, without the fail-hook/hang-hook checks that
// every hook makes first.
func calls(t *testing.T, fake string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fake, "calls"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, " \n") // "relation-list " has no arguments
		if line != "config-get --all" {
			out = append(out, line)
		}
	}
	return out
}

// checkHooksLog: the hook wrote "<hook> <remote unit or ->" to hooks.log, so that tests of
// the agent can read the order in which hooks ran (L-R2, L-R3).
func checkHooksLog(t *testing.T, dir string, r hookRun) {
	t.Helper()
	remote := "-"
	if strings.Contains(r.remote, "/") {
		remote = r.remote
	}
	got, err := os.ReadFile(filepath.Join(dir, "hooks.log"))
	if want := r.hook + " " + remote + "\n"; err != nil || string(got) != want {
		t.Errorf("hooks.log = %q, %v; want %q", got, err, want)
	}
}

const (
	mysqlSettings = "host=10.0.0.9 port=3306 database=wordpress user=wordpress-user password=[0-9]+"
	dbState       = "mysql/0 10.0.0.7 3306 wordpress wordpress-user secret\n"
)

// mysqlData is what mysql/<n> publishes on the db relation, for the fake relation-get.
func mysqlData(n, host string) map[string]string {
	return map[string]string{
		"relation/mysql/" + n + "/host": host, "relation/mysql/" + n + "/port": "3306",
		"relation/mysql/" + n + "/database": "wordpress", "relation/mysql/" + n + "/user": "wordpress-user",
		"relation/mysql/" + n + "/password": "secret",
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func dbGets(unit string) []string {
	var out []string
	for _, key := range []string{"host", "port", "database", "user", "password"} {
		out = append(out, "relation-get "+key+" "+unit)
	}
	return out
}

func TestSampleCharmHooks(t *testing.T) {
	tools := fakeTools(t)
	cases := []struct {
		name string
		hookRun
		want      []string          // the calls, each a regexp for the whole line
		wantState map[string]string // files in the charm directory afterwards; "" is absent
	}{
		{name: "mysql install", hookRun: hookRun{charm: "mysql", hook: "install",
			fake: map[string]string{"config/fail-hook": "install-x start", "config/hang-hook": "stop"}},
			want: []string{"status-set maintenance installing mysql", "application-version-set 8.0.36"}},
		{name: "mysql leader-elected picks the root password", hookRun: hookRun{charm: "mysql", hook: "leader-elected"},
			want: []string{"leader-get root-password", "leader-set root-password=[0-9a-f]{24}"}},
		{name: "mysql leader-elected keeps the root password", hookRun: hookRun{charm: "mysql", hook: "leader-elected",
			fake: map[string]string{"leader/root-password": "old"}},
			want: []string{"leader-get root-password"}},
		{name: "mysql start", hookRun: hookRun{charm: "mysql", hook: "start"},
			want: []string{"open-port 3306/tcp", "status-set active ready"}},
		{name: "mysql stop", hookRun: hookRun{charm: "mysql", hook: "stop"},
			want: []string{"close-port 3306/tcp"}},
		{name: "mysql db joined publishes the database", hookRun: hookRun{charm: "mysql", hook: "db-relation-joined", remote: "wordpress/0"},
			want: []string{"unit-get private-address", "relation-set " + mysqlSettings}},
		{name: "mysql db departed", hookRun: hookRun{charm: "mysql", hook: "db-relation-departed", remote: "wordpress/0"},
			want: []string{"juju-log wordpress/0 left db:7"}},
		{name: "mysql db broken", hookRun: hookRun{charm: "mysql", hook: "db-relation-broken", remote: "wordpress"},
			want: []string{"juju-log db:7 is broken: database wordpress is no longer served"}},

		{name: "wordpress start without database", hookRun: hookRun{charm: "wordpress", hook: "start"},
			want: []string{"status-set blocked waiting for database"}},
		{name: "wordpress start with database", hookRun: hookRun{charm: "wordpress", hook: "start", state: map[string]string{".state/db": dbState}},
			want: []string{"status-set active serving with database 10.0.0.7:3306", "open-port 80/tcp"}},
		{name: "wordpress db changed waits for the password (seed 004)", hookRun: hookRun{charm: "wordpress", hook: "db-relation-changed", remote: "mysql/0",
			fake: merge(mysqlData("0", "10.0.0.7"), map[string]string{"relation/mysql/0/password": ""})},
			want: dbGets("mysql/0"), wantState: map[string]string{".state/db": ""}},
		{name: "wordpress db changed serves", hookRun: hookRun{charm: "wordpress", hook: "db-relation-changed", remote: "mysql/0", fake: mysqlData("0", "10.0.0.7")},
			want:      append(dbGets("mysql/0"), "status-set active serving with database 10.0.0.7:3306", "open-port 80/tcp"),
			wantState: map[string]string{".state/db": dbState}},
		{name: "wordpress db departed, another unit", hookRun: hookRun{charm: "wordpress", hook: "db-relation-departed", remote: "mysql/1", state: map[string]string{".state/db": dbState}},
			want: []string{"juju-log database unit mysql/1 departed"}, wantState: map[string]string{".state/db": dbState}},
		{name: "wordpress db departed, moves to another unit", hookRun: hookRun{charm: "wordpress", hook: "db-relation-departed", remote: "mysql/0",
			state: map[string]string{".state/db": dbState}, fake: merge(mysqlData("1", "10.0.0.8"), map[string]string{"units": "mysql/0\nmysql/1\n"})},
			want: append(append([]string{"juju-log database unit mysql/0 departed", "relation-list"}, dbGets("mysql/1")...),
				"status-set active serving with database 10.0.0.8:3306", "open-port 80/tcp"),
			wantState: map[string]string{".state/db": "mysql/1 10.0.0.8 3306 wordpress wordpress-user secret\n"}},
		{name: "wordpress db departed, last unit", hookRun: hookRun{charm: "wordpress", hook: "db-relation-departed", remote: "mysql/0", state: map[string]string{".state/db": dbState}},
			want:      []string{"juju-log database unit mysql/0 departed", "relation-list", "status-set blocked waiting for database", "close-port 80/tcp"},
			wantState: map[string]string{".state/db": ""}},
		{name: "wordpress db broken", hookRun: hookRun{charm: "wordpress", hook: "db-relation-broken", remote: "mysql", state: map[string]string{".state/db": dbState}},
			want:      []string{"status-set blocked waiting for database", "close-port 80/tcp"},
			wantState: map[string]string{".state/db": ""}},
		{name: "wordpress website joined", hookRun: hookRun{charm: "wordpress", hook: "website-relation-joined", remote: "haproxy/0"},
			want: []string{"unit-get private-address", "relation-set hostname=10.0.0.9 port=80"}},

		{name: "haproxy start", hookRun: hookRun{charm: "haproxy", hook: "start"},
			want: []string{"status-set blocked waiting for backends", "close-port 80/tcp"}},
		{name: "haproxy reverseproxy changed waits for the port", hookRun: hookRun{charm: "haproxy", hook: "reverseproxy-relation-changed", remote: "wordpress/0",
			fake: map[string]string{"relation/wordpress/0/hostname": "10.0.0.7"}},
			want: []string{"relation-get hostname wordpress/0", "relation-get port wordpress/0"}},
		{name: "haproxy reverseproxy changed adds a backend", hookRun: hookRun{charm: "haproxy", hook: "reverseproxy-relation-changed", remote: "wordpress/1",
			state: map[string]string{".state/backends/wordpress/0": "10.0.0.7:80\n"},
			fake:  map[string]string{"relation/wordpress/1/hostname": "10.0.0.8", "relation/wordpress/1/port": "80"}},
			want:      []string{"relation-get hostname wordpress/1", "relation-get port wordpress/1", "status-set active balancing 2 backends", "open-port 80/tcp"},
			wantState: map[string]string{".state/backends/wordpress/1": "10.0.0.8:80\n"}},
		{name: "haproxy reverseproxy departed, last backend", hookRun: hookRun{charm: "haproxy", hook: "reverseproxy-relation-departed", remote: "wordpress/0",
			state: map[string]string{".state/backends/wordpress/0": "10.0.0.7:80\n"}},
			want:      []string{"juju-log website unit wordpress/0 departed", "status-set blocked waiting for backends", "close-port 80/tcp"},
			wantState: map[string]string{".state/backends/wordpress/0": ""}},
		{name: "haproxy website joined", hookRun: hookRun{charm: "haproxy", hook: "website-relation-joined", remote: "client/0"},
			want: []string{"unit-get private-address", "relation-set hostname=10.0.0.9 port=80"}},

		{name: "logging start before its principal", hookRun: hookRun{charm: "logging", hook: "start"},
			want: []string{"status-set waiting waiting for principal"}},
		{name: "logging juju-info joined", hookRun: hookRun{charm: "logging", hook: "juju-info-relation-joined", remote: "wordpress/0"},
			want:      []string{"juju-log logging for wordpress/0", "status-set active logging wordpress/0"},
			wantState: map[string]string{".state/principal": "wordpress/0\n"}},
		{name: "logging start with its principal", hookRun: hookRun{charm: "logging", hook: "start", state: map[string]string{".state/principal": "wordpress/0\n"}},
			want: []string{"status-set active logging wordpress/0"}},
		{name: "logging juju-info departed", hookRun: hookRun{charm: "logging", hook: "juju-info-relation-departed", remote: "wordpress/0",
			state: map[string]string{".state/principal": "wordpress/0\n"}},
			want:      []string{"juju-log principal wordpress/0 departed", "status-set maintenance principal gone"},
			wantState: map[string]string{".state/principal": ""}},
		{name: "logging juju-info broken", hookRun: hookRun{charm: "logging", hook: "juju-info-relation-broken", remote: "wordpress"},
			want: []string{"juju-log juju-info relation juju-info:7 broken", "status-set maintenance principal gone"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd, dir, fake, stderr := c.start(context.Background(), t, tools)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("hook failed: %v\n%s", err, stderr)
			}
			got := calls(t, fake)
			if len(got) != len(c.want) {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for i, want := range c.want {
				if !regexp.MustCompile("^" + want + "$").MatchString(got[i]) {
					t.Errorf("call %d = %q, want %q", i, got[i], want)
				}
			}
			checkHooksLog(t, dir, c.hookRun)
			for name, want := range c.wantState {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if want == "" && !os.IsNotExist(err) || want != "" && string(got) != want {
					t.Errorf("%s = %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
}

// charmHooks lists the hooks of a sample charm.
func charmHooks(t *testing.T, name string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(charmsDir, name, "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []string
	for _, e := range entries {
		hooks = append(hooks, e.Name())
	}
	return hooks
}

// Every hook exits 1 first thing when named in fail-hook, so tests of the agent can make any
// of them fail (a unit in error until resolved, L-U2, L-F2).
func TestSampleCharmFailHook(t *testing.T) {
	tools := fakeTools(t)
	for _, name := range sampleCharms {
		for _, hook := range charmHooks(t, name) {
			t.Run(name+"/"+hook, func(t *testing.T) {
				r := hookRun{charm: name, hook: hook, fake: map[string]string{"config/fail-hook": "nothing " + hook}}
				if strings.Contains(hook, "-relation-") {
					r.remote = "other/0"
				}
				cmd, dir, fake, stderr := r.start(context.Background(), t, tools)
				err := cmd.Wait()
				if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
					t.Fatalf("hook = %v, want exit status 1", err)
				}
				if !strings.Contains(stderr.String(), "failing on purpose (fail-hook)") {
					t.Errorf("stderr = %q", stderr)
				}
				if got := calls(t, fake); len(got) != 0 {
					t.Errorf("a failing hook went on to call %q", got)
				}
				checkHooksLog(t, dir, r)
			})
		}
	}
}

// A hook named in hang-hook sleeps until it is killed (the hook time limit), and leaves no
// child behind holding its output.
func TestSampleCharmHangHook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := hookRun{charm: "mysql", hook: "start", fake: map[string]string{"config/hang-hook": "start"}}
	began := time.Now()
	cmd, _, fake, stderr := r.start(ctx, t, fakeTools(t))
	err := cmd.Wait()
	if ctx.Err() == nil || err == nil {
		t.Fatalf("hook ended on its own: %v", err)
	}
	if time.Since(began) > time.Second {
		t.Errorf("hook took %s to stop after being killed: a child kept its output open", time.Since(began))
	}
	if !strings.Contains(stderr.String(), "hanging on purpose (hang-hook)") {
		t.Errorf("stderr = %q", stderr)
	}
	if got := calls(t, fake); len(got) != 0 {
		t.Errorf("a hanging hook called %q", got)
	}
}

// The sample charms are well formed: metadata, the test options in config.yaml, hooks the
// agent runs (core/charm's checks at deploy), each a POSIX sh script starting with common.sh,
// and no peer relation hooks (the benchmark deploys 1,000 units; they would run n² times).
func TestSampleCharmFiles(t *testing.T) {
	common, err := os.ReadFile(filepath.Join(charmsDir, "mysql", "lib", "common.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sampleCharms {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(charmsDir, name)
			meta, err := charm.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			config, err := charm.ReadConfigDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []string{"fail-hook", "hang-hook"} {
				if o := config.Options[opt]; o.Type != charm.TypeString || o.Default != "" {
					t.Errorf("config.yaml option %s = %+v, want a string defaulting to \"\"", opt, o)
				}
			}
			if warnings, err := charm.CheckHooks(dir, meta); err != nil || len(warnings) > 0 {
				t.Errorf("CheckHooks: %v %q", err, warnings)
			}
			// The charms cannot share files, so each has a copy of common.sh: keep them equal.
			if data, err := os.ReadFile(filepath.Join(dir, "lib", "common.sh")); err != nil || !bytes.Equal(data, common) {
				t.Errorf("lib/common.sh differs from mysql's (%v)", err)
			}
			hooks := charmHooks(t, name)
			for _, hook := range lifecycleHooks {
				if !slices.Contains(hooks, hook) {
					t.Errorf("no %s hook", hook)
				}
			}
			for _, hook := range hooks {
				endpoint, _, _ := strings.Cut(hook, "-relation-")
				if _, peer := meta.Peers[endpoint]; peer {
					t.Errorf("hooks/%s is a peer relation hook", hook)
				}
				body, _ := os.ReadFile(filepath.Join(dir, "hooks", hook))
				if !bytes.HasPrefix(body, []byte("#!/bin/sh\nset -e\n. \"${0%/*}/../lib/common.sh\"\n")) {
					t.Errorf("hooks/%s does not start with #!/bin/sh, set -e and sourcing lib/common.sh", hook)
				}
			}
			libs, _ := filepath.Glob(filepath.Join(dir, "lib", "*.sh"))
			hookPaths, _ := filepath.Glob(filepath.Join(dir, "hooks", "*"))
			for _, path := range append(libs, hookPaths...) {
				if out, err := exec.Command("sh", "-n", path).CombinedOutput(); err != nil {
					t.Errorf("sh -n %s: %v\n%s", path, err, out)
				}
			}
		})
	}
}
