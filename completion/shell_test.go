package completion_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/controller/apiserver"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

// These tests press Tab in real shells: bash with Debian's bash-completion, calling the function
// `complete -p juju` names the way readline does, and an interactive zsh (compinit) in a
// pseudo-terminal of zsh's zpty module. The juju binary is the real one, and the live names come
// from a real controller (API server, state, embedded etcd) in this process.

// hangGuard bounds one Tab: far above the 200 ms completion allows itself, it only catches a hang.
const hangGuard = 20 * time.Second

var (
	buildOnce sync.Once
	jujuDir   string
	buildErr  error
)

// jujuBinary builds the juju command once for the package's tests and returns its directory.
func jujuBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		jujuDir, buildErr = os.MkdirTemp("", "juju-completion-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(jujuDir, "juju"), "github.com/jujuclone/juju/cmd/juju").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return jujuDir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building juju: " + e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if jujuDir != "" {
		os.RemoveAll(jujuDir)
	}
	os.Exit(code)
}

// shellEnv is a client store with two controllers: "test", current, a real controller with
// wordpress (12 units) and mysql (1 unit) in its model "default" and a second model "other";
// and "dead", whose endpoint accepts connections and never answers.
type shellEnv struct {
	env []string
	dir string // the current directory of the shells: backup.tar, my.cnf and bin/
}

func startShellEnv(t *testing.T) *shellEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	es, err := store.StartEmbedded(ctx, filepath.Join(dir, "etcd"), store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	st := state.New(es.Client)
	if _, err := st.Bootstrap(ctx, state.BootstrapArgs{
		ControllerName: "test", AdminPasswordHash: state.HashPassword("admin-secret"),
		Cloud: "localhost", Region: "localhost", Base: "ubuntu@22.04",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddModel(ctx, "other", "admin", "", "localhost", "localhost"); err != nil {
		t.Fatal(err)
	}
	m, err := st.Model(ctx, state.DefaultModelName)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range []struct {
		name, meta, config string
		units              int
	}{
		{"wordpress", "name: wordpress\nsummary: blog\nrequires:\n  db: mysql\nprovides:\n  website: http\npeers:\n  cluster: wp\nbases: [ubuntu@22.04]\n",
			"options:\n  blog-title: {type: string, default: x, description: d}\n  fail-hook: {type: string, description: d}\n  hang-hook: {type: string, description: d}\n", 12},
		{"mysql", "name: mysql\nsummary: db\nprovides:\n  db: mysql\nbases: [ubuntu@22.04]\n", "", 1},
	} {
		ch, err := st.AddCharm(ctx, m.Uuid, charmArchive(t, app.meta, app.config))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Deploy(ctx, m.Uuid, state.DeployArgs{Name: app.name, CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddUnits(ctx, m.Uuid, app.name, app.units, nil); err != nil {
			t.Fatal(err)
		}
	}
	cert, caPEM, err := bootstrap.EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := apiserver.New(apiserver.Config{
		State: st, ControllerName: "test", Cloud: "localhost", Region: "localhost", Context: ctx,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	data := filepath.Join(dir, "juju")
	s := cmdutil.NewStore(data)
	for name, ep := range map[string]string{"test": lis.Addr().String(), "dead": silentListener(t)} {
		if err := s.AddController(name, cmdutil.ControllerDetails{
			UUID: "uuid-" + name, APIEndpoints: []string{ep}, CACert: string(caPEM), Cloud: "localhost",
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateAccount(name, cmdutil.AccountDetails{User: "admin", Password: "admin-secret"}); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateModel(name, "default", cmdutil.ModelDetails{UUID: m.Uuid, Type: "iaas"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetCurrentModel(name, "default"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetCurrentController("test"); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	for _, f := range []string{"backup.tar", "my.cnf", "bin/tool"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(work, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &shellEnv{dir: work, env: []string{
		"PATH=" + jujuBinary(t) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir, "JUJU_DATA=" + data, "JUJU_CONTROLLER=", "JUJU_MODEL=", "NO_COLOR=1", "TERM=dumb",
	}}
}

// silentListener accepts connections and never answers: a controller that hangs.
func silentListener(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// charmArchive is a charm with this metadata.yaml and config.yaml (none when empty).
func charmArchive(t *testing.T, meta, config string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, content string }{{"metadata.yaml", meta}, {"config.yaml", config}} {
		if f.content == "" {
			continue
		}
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// run runs a shell script for a Tab on line, with the env's environment, failing the test if it
// outlives the hang guard. Lines that reach the live controller give completion ample time, so
// that a loaded machine cannot make them miss their names; the dead controller's keep the
// default deadline, which they must not hang past.
func (e *shellEnv) run(t *testing.T, line, shell string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), e.env...)
	if !strings.Contains(line, "dead:") {
		cmd.Env = append(cmd.Env, "JUJU_COMPLETION_TIMEOUT=10s")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("%s %q hangs", shell, args)
	}
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", shell, args, err, stderr.String())
	}
	return string(out)
}

type tabCase struct {
	line string
	want []string // exactly these candidates, in any order
}

// tabCases are pressed in both shells. The line ends where the cursor is.
var tabCases = []tabCase{
	{"juju show-u", []string{"show-unit"}},
	{"juju status --form", []string{"--format"}},
	{"juju status --format ta", []string{"tabular"}},
	{"juju deploy ./x --base ubuntu@2", []string{"ubuntu@20.04", "ubuntu@22.04", "ubuntu@24.04"}},
	{"juju deploy ./x --constraints ro", []string{"root-disk=", "root-disk-source="}},
	{"juju set-constraints mysql ar", []string{"arch="}},
	{"juju deploy ./x --constraints mem=", nil},
	{"juju show-unit wordpress/1", []string{"wordpress/1", "wordpress/10", "wordpress/11"}},
	{"juju remove-unit my", []string{"mysql/0"}},
	{"juju show-machine 1", []string{"1", "10", "11", "12"}},
	{"juju config wordpress bl", []string{"blog-title"}},
	{"juju config wordpress ", []string{"blog-title", "fail-hook", "hang-hook", "trust"}},
	{"juju status my", []string{"mysql", "mysql/0"}},
	{"juju status -m ", []string{"controller", "default", "other"}},
	{"juju kill-controller ", []string{"dead", "test"}},
	{"juju show-unit -m dead:default wordpress/", nil},
	// ssh: units, <application>/leader and machines; nothing for the remote command.
	{"juju ssh my", []string{"mysql/0", "mysql/leader"}},
	{"juju ssh wordpress/1", []string{"wordpress/1", "wordpress/10", "wordpress/11"}},
	{"juju ssh wordpress/l", []string{"wordpress/leader"}},
	{"juju ssh 1", []string{"1", "10", "11", "12"}},
	{"juju ssh mysql/0 ", nil},
	// scp: remote locations up to their ":" next to local files; nothing for a remote path.
	{"juju scp wordpress/1", []string{"wordpress/1:", "wordpress/10:", "wordpress/11:"}},
	{"juju scp my", []string{"my.cnf", "mysql/0:", "mysql/leader:"}},
	{"juju scp backup.tar mysql/0:", nil},
	{"juju scp mysql/0:/var/l", nil},
	// debug-log: entities, the last of a comma-separated list.
	{"juju debug-log --include my", []string{"mysql", "mysql/0"}},
	{"juju debug-log --exclude mysql,wordpress/1", []string{"mysql,wordpress/1", "mysql,wordpress/10", "mysql,wordpress/11"}},
}

// bashTab presses Tab in bash: bash-completion and juju's script are sourced, COMP_* are set as
// readline sets them, and the function `complete -p juju` names is called.
const bashTab = `
source /usr/share/bash-completion/bash_completion || exit 3
source <(juju completion bash)
COMP_LINE=$1
COMP_POINT=${#COMP_LINE}
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_TYPE=9
COLUMNS=200
spec=$(complete -p juju) || exit 4
fn=${spec##*-F }
fn=${fn%% *}
"$fn" juju "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
`

// readlineWords splits a line into COMP_WORDS as readline does for these lines: at blanks, with
// the word-breaking characters ":" and "=" words of their own; a trailing blank starts an empty
// word.
func readlineWords(line string) []string {
	var words []string
	for _, field := range strings.Split(line, " ") {
		word := ""
		for _, r := range field {
			if r == ':' || r == '=' {
				if word != "" {
					words = append(words, word)
				}
				words = append(words, string(r))
				word = ""
				continue
			}
			word += string(r)
		}
		if word != "" || field == "" {
			words = append(words, word)
		}
	}
	return words
}

func TestBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err != nil {
		t.Skip("bash-completion is not installed")
	}
	e := startShellEnv(t)
	cases := append(slices.Clone(tabCases),
		// readline inserts after the last ":" or "=", so the candidates are what follows it.
		tabCase{"juju integrate wordpress:", []string{"cluster", "db", "juju-info", "website"}},
		tabCase{"juju integrate mysql wordpress:w", []string{"website"}},
		tabCase{"juju deploy ./x --constraints arch=a", []string{"amd64", "arm64"}},
		tabCase{"juju status --format=y", []string{"yaml"}},
	)
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			t.Parallel()
			out := e.run(t, tc.line, "bash", append([]string{"--norc", "--noprofile", "-c", bashTab, "bash", tc.line}, readlineWords(tc.line)...)...)
			checkCandidates(t, out, tc.want)
		})
	}
}

// zshSetup runs in the interactive zsh: completion is initialised, and compadd is wrapped to
// print each candidate zsh accepted, between marks printed before and after each completion.
const zshSetup = `
PROMPT='' RPROMPT=''
autoload -U compinit && compinit -u -D
source <(juju completion zsh)
bindkey '^I' complete-word
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
juju_test_mark() { print -r -- '@@JUJU-TEST-MARK@@' }
compprefuncs=(juju_test_mark)
comppostfuncs=(juju_test_mark exit)
compadd() {
  # Calls that only compute matches into an array are zsh's own business.
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "$@"
    return
  fi
  local -a hits
  builtin compadd -A hits "$@"
  (( $#hits )) || return 1
  print -rl -- "${(@)hits/#/@@MATCH@@}"
}
print -r -- '@@JUJU-TEST-READY@@'
`

// zshTab runs an interactive zsh in a zpty pseudo-terminal, types the line and a Tab, and prints
// the candidates between the two marks.
const zshTab = `
zmodload zsh/zpty || exit 3
zpty z zsh -f -i || exit 4
zpty -w z "source ${(q)1}"
while zpty -r z line; do [[ $line == *@@JUJU-TEST-READY@@* ]] && break; done
zpty -w -n z "$2"$'\t'
integer marks=0
while zpty -r z line; do
  line=${line//$'\r'/}
  if [[ $line == *@@JUJU-TEST-MARK@@* ]]; then
    (( ++marks == 2 )) && break
    continue
  fi
  [[ $line == *@@MATCH@@* ]] && print -r -- "${line#*@@MATCH@@}"
done
zpty -d z
`

func TestZsh(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed")
	}
	e := startShellEnv(t)
	setup := filepath.Join(t.TempDir(), "setup.zsh")
	if err := os.WriteFile(setup, []byte(zshSetup), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := append(slices.Clone(tabCases),
		tabCase{"juju integrate wordpress:", []string{"wordpress:cluster", "wordpress:db", "wordpress:juju-info", "wordpress:website"}},
		tabCase{"juju integrate mysql wordpress:w", []string{"wordpress:website"}},
		tabCase{"juju deploy ./x --constraints arch=a", []string{"arch=amd64", "arch=arm64"}},
		// The shell's own file completion, when no target matches (bash's comes from readline
		// after the completion function, out of this test's sight).
		tabCase{"juju scp ba", []string{"backup.tar"}},
		tabCase{"juju ssh mysql/0 -i ba", []string{"backup.tar"}},
	)
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			t.Parallel()
			checkCandidates(t, e.run(t, tc.line, "zsh", "-f", "-c", zshTab, "zsh", setup, tc.line), tc.want)
		})
	}
}

// checkCandidates compares the shell's candidates, one a line (bash adds "  (description)" when
// it lists several), with want.
func checkCandidates(t *testing.T, out string, want []string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "  ("); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			got = append(got, line)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
}
