package ssh

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/core/sshkey"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

const hostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU"

func TestNewCmdSSH(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantTarget    string
		wantArgs      string
		wantNoChecks  bool
		wantPty       string
	}{
		{args: "0", wantTarget: "0", wantPty: "<auto>"},
		{args: "mysql/0 echo hi", wantTarget: "mysql/0", wantArgs: "echo hi", wantPty: "<auto>"},
		// Options after the target are ssh's, juju's own included.
		{args: "--no-host-key-checks -m other mysql/0 -i key -v uname -a", wantTarget: "mysql/0", wantArgs: "-i key -v uname -a", wantNoChecks: true, wantPty: "<auto>"},
		{args: "--pty=false root@0 true", wantTarget: "root@0", wantArgs: "true", wantPty: "false"},
		{args: "--pty 0", wantTarget: "0", wantPty: "true"},
		{args: "", wantErr: "no target name specified"},
		{args: "--container charm mysql/0", wantErr: "--container applies to Kubernetes models only; this model's units run on machines"},
		{args: "--proxy 0", wantErr: "--proxy is not supported: the client reaches every machine's ssh server directly"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *sshOptions
			cmd := NewCmdSSH(cmdutil.TestFactory(), func(o *sshOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Target != tt.wantTarget || strings.Join(got.Args, " ") != tt.wantArgs ||
				got.NoHostKeyChecks != tt.wantNoChecks || got.Pty.String() != tt.wantPty {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeTargets answers as a controller whose machines 0 and 1 serve ssh (1 off port 22).
type fakeTargets struct {
	ensureErr error
	asked     []string
	ensured   int
}

func (f *fakeTargets) EnsureClientSSHKey(_ context.Context, model, key string) (*jujupb.EnsureClientKeyResponse, error) {
	f.ensured++
	if f.ensureErr != nil {
		return nil, f.ensureErr
	}
	if k, err := sshkey.Parse(key); err != nil || k.Comment != "juju-client-key" || model != "uuid-default" {
		return nil, errors.New("bad ensure call")
	}
	return &jujupb.EnsureClientKeyResponse{Added: true, KeysRevision: 42}, nil
}

func (f *fakeTargets) SSHTarget(ctx context.Context, model, target string, rev int64) (*jujupb.SSHTargetResponse, error) {
	f.asked = append(f.asked, target)
	if _, ok := ctx.Deadline(); !ok || rev != 42 {
		return nil, errors.New("SSHTarget called without a deadline or the key's revision")
	}
	switch target {
	case "0", "mysql/0", "mysql/leader":
		return &jujupb.SSHTargetResponse{MachineId: "0", Address: "127.1.0.2", Port: 22, User: "root", HostKey: hostKey}, nil
	case "1", "wordpress/0":
		return &jujupb.SSHTargetResponse{MachineId: "1", Address: "127.1.0.3", Port: 2201, User: "root", HostKey: hostKey}, nil
	}
	return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", target)
}

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin", Type: "iaas"}, nil
}

// recorded is what a fake Runner saw: the program, its arguments with the temporary paths
// named, and the known_hosts file it was given.
type recorded struct {
	name       string
	args       []string
	knownHosts string
}

func (r recorded) String() string {
	s := r.name + "\n"
	for _, a := range r.args {
		s += "  " + a + "\n"
	}
	if r.knownHosts != "" {
		s += "known_hosts:\n" + r.knownHosts
	}
	return s
}

// fakeRunner records the call, reading the known_hosts file while it exists; fail makes it
// exit with that status (through a real process, for a real *exec.ExitError) and stderr.
func fakeRunner(t *testing.T, dataDir string, rec *recorded, fail int, stderr string) Runner {
	return func(_ context.Context, name string, args []string, _ io.Reader, _, errOut io.Writer) error {
		rec.name = name
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "UserKnownHostsFile="); ok && v != "/dev/null" {
				data, err := os.ReadFile(v)
				if err != nil {
					t.Errorf("known_hosts file: %v", err)
				}
				rec.knownHosts = string(data)
				a = "UserKnownHostsFile=<temporary known_hosts>"
			}
			rec.args = append(rec.args, strings.ReplaceAll(a, dataDir, "$JUJU_DATA"))
		}
		if fail != 0 {
			io.WriteString(errOut, stderr)
			return exec.Command("sh", "-c", "exit "+strconv.Itoa(fail)).Run()
		}
		return nil
	}
}

// testEnv gives each test its own $JUJU_DATA and a home without keys.
func testEnv(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	return t.TempDir()
}

func TestSSHRun(t *testing.T) {
	tests := []struct {
		name    string
		target  string
		args    []string
		noCheck bool
		pty     *bool
		stdinTT bool
	}{
		{name: "unit", target: "mysql/0", args: []string{"echo", "hi"}},
		{name: "other-port", target: "1", args: []string{"-v", "uname -a"}},
		{name: "user", target: "root@wordpress/0"},
		{name: "leader-terminal", target: "mysql/leader", stdinTT: true},
		{name: "no-pty", target: "0", pty: new(false), args: []string{"true"}},
		{name: "no-host-key-checks", target: "0", noCheck: true, args: []string{"hostname"}},
		{name: "own-host", target: "me@example.com", args: []string{"true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := testEnv(t)
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.stdinTT
			var rec recorded
			fake := &fakeTargets{}
			opts := &sshOptions{
				IO: ios, ResolveModel: testModel, DataDir: func() (string, error) { return data, nil },
				Client: func(context.Context) (targetAPI, error) { return fake, nil },
				Run:    fakeRunner(t, data, &rec, 0, ""), Wait: time.Second,
				Target: tt.target, Args: tt.args, NoHostKeyChecks: tt.noCheck, Pty: autoBool{value: tt.pty},
			}
			if err := sshRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if out.Len() != 0 || errOut.Len() != 0 {
				t.Errorf("juju itself wrote %q, %q", out, errOut)
			}
			golden.Assert(t, rec.String(), "ssh/"+tt.name+".args.golden")
			// The temporary known_hosts file is gone after the run.
			matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "juju-known-hosts-*"))
			for _, m := range matches {
				if strings.Contains(rec.String(), m) {
					t.Errorf("known_hosts %s left behind", m)
				}
			}
		})
	}
}

func TestSSHRunExitStatusPassesThrough(t *testing.T) {
	data := testEnv(t)
	ios, _, errOut := output.TestStreams()
	var rec recorded
	opts := &sshOptions{
		IO: ios, ResolveModel: testModel, DataDir: func() (string, error) { return data, nil },
		Client: func(context.Context) (targetAPI, error) { return &fakeTargets{}, nil },
		Run:    fakeRunner(t, data, &rec, 3, "remote said no\n"), Wait: time.Second, Target: "0", Args: []string{"false"},
	}
	err := sshRun(context.Background(), opts)
	var ec *ExitCodeError
	if !errors.As(err, &ec) || ec.PassthroughExitCode() != 3 {
		t.Fatalf("err = %v, want exit status 3 passed through", err)
	}
	// ssh's own stderr is the user's, untouched.
	if errOut.String() != "remote said no\n" {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestSSHRunErrors(t *testing.T) {
	tests := []struct {
		name, target string
		fake         *fakeTargets
		want         string
	}{
		{name: "unknown unit", target: "mysql/9", fake: &fakeTargets{}, want: `unit "mysql/9" not found`},
		{name: "other account", target: "ubuntu@0", fake: &fakeTargets{}, want: `0 accepts ssh logins as "root" only, not "ubuntu"`},
		{name: "key refused", target: "0", fake: &fakeTargets{ensureErr: apierr.Errorf(apierr.NotAlive, `model "default" is being destroyed`)},
			want: `authorizing the client's ssh key: model "default" is being destroyed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := testEnv(t)
			ios, out, _ := output.TestStreams()
			ran := false
			opts := &sshOptions{
				IO: ios, ResolveModel: testModel, DataDir: func() (string, error) { return data, nil },
				Client: func(context.Context) (targetAPI, error) { return tt.fake, nil }, Wait: time.Second,
				Run: func(context.Context, string, []string, io.Reader, io.Writer, io.Writer) error {
					ran = true
					return nil
				},
				Target: tt.target,
			}
			cmdtest.CheckErr(t, sshRun(context.Background(), opts), tt.want, false)
			if ran || out.Len() != 0 {
				t.Errorf("ssh ran (%v) or stdout %q", ran, out)
			}
		})
	}
}

func TestNewCmdSCP(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantArgs      string
		usage         bool
	}{
		{args: "mysql/0:/etc/hostname .", wantArgs: "mysql/0:/etc/hostname ."},
		{args: "--no-host-key-checks -- -r dir 0:", wantArgs: "-r dir 0:"},
		{args: "a", wantErr: "at least two arguments required", usage: true},
		{args: "-r a b", wantErr: "option provided but not defined: -r (scp's own options go after --: juju scp -- -r <source> <destination>)", usage: true},
		{args: "--container x a 0:b", wantErr: "--container applies to Kubernetes models only; this model's units run on machines", usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *scpOptions
			cmd := NewCmdSCP(cmdutil.TestFactory(), func(o *scpOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr == "" && strings.Join(got.Args, " ") != tt.wantArgs {
				t.Errorf("args = %q", got.Args)
			}
		})
	}
}

func TestSCPRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		noCheck bool
	}{
		{name: "to-unit", args: []string{"file", "mysql/0:/tmp/file"}},
		{name: "from-unit", args: []string{"mysql/0:/etc/hostname", "."}},
		{name: "recursive-other-port", args: []string{"-r", "dir", "root@1:rel/100%"}},
		{name: "between-machines", args: []string{"-3", "0:file.dat", "1:"}},
		{name: "no-host-key-checks", args: []string{"0:/tmp/a", "b"}, noCheck: true},
		{name: "local-only", args: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := testEnv(t)
			ios, out, errOut := output.TestStreams()
			var rec recorded
			fake := &fakeTargets{}
			opts := &scpOptions{
				IO: ios, ResolveModel: testModel, DataDir: func() (string, error) { return data, nil },
				Client: func(context.Context) (targetAPI, error) { return fake, nil },
				Run:    fakeRunner(t, data, &rec, 0, ""), Wait: time.Second, Args: tt.args, NoHostKeyChecks: tt.noCheck,
			}
			if err := scpRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if out.Len() != 0 || errOut.Len() != 0 {
				t.Errorf("juju itself wrote %q, %q", out, errOut)
			}
			if tt.name == "between-machines" && fake.ensured != 1 {
				t.Errorf("the client key was ensured %d times, want once", fake.ensured)
			}
			golden.Assert(t, rec.String(), "scp/"+tt.name+".args.golden")
		})
	}
}

func TestSCPRunErrors(t *testing.T) {
	data := testEnv(t)
	ios, _, errOut := output.TestStreams()
	var rec recorded
	opts := &scpOptions{
		IO: ios, ResolveModel: testModel, DataDir: func() (string, error) { return data, nil },
		Client: func(context.Context) (targetAPI, error) { return &fakeTargets{}, nil },
		Run:    fakeRunner(t, data, &rec, 1, "scp: /nope: No such file or directory\n"), Wait: time.Second,
		Args: []string{"0:/nope", "."},
	}
	cmdtest.CheckErr(t, scpRun(context.Background(), opts), "exit status 1 (scp: /nope: No such file or directory)", false)
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q: scp's complaint belongs in the error", errOut)
	}
	// A host of the user's own beside a machine of the model: no host key to check it with.
	opts.Args = []string{"0:/a", "example.com:/b"}
	cmdtest.CheckErr(t, scpRun(context.Background(), opts), "can't determine host keys for all targets: consider --no-host-key-checks", false)
	opts.Args = []string{"mysql/9:/a", "."}
	cmdtest.CheckErr(t, scpRun(context.Background(), opts), `unit "mysql/9" not found`, false)
}

func TestEnsureClientKey(t *testing.T) {
	data := t.TempDir()
	k, err := EnsureClientKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if k.Path != filepath.Join(data, "ssh", "juju_id_ed25519") || !strings.HasSuffix(k.Public, " juju-client-key") {
		t.Errorf("key = %+v", k)
	}
	for path, mode := range map[string]os.FileMode{filepath.Join(data, "ssh"): 0o700 | os.ModeDir, k.Path: 0o600, k.Path + ".pub": 0o644} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v %v, want mode %v", path, fi.Mode(), err, mode)
		}
	}
	pub, _ := os.ReadFile(k.Path + ".pub")
	if strings.TrimSpace(string(pub)) != k.Public {
		t.Errorf(".pub = %q, want %q", pub, k.Public)
	}
	// ssh-keygen reads it as OpenSSH's own format.
	if keygen, err := exec.LookPath("ssh-keygen"); err == nil {
		out, err := exec.Command(keygen, "-y", "-f", k.Path).Output()
		if err != nil || !strings.HasPrefix(k.Public, strings.TrimSpace(string(out))) {
			t.Errorf("ssh-keygen -y: %q, %v", out, err)
		}
	}
	again, err := EnsureClientKey(data)
	if err != nil || again != k {
		t.Errorf("second call = %+v, %v", again, err)
	}
}

// Several juju processes reaching for the key at once end up with one key.
func TestEnsureClientKeyConcurrently(t *testing.T) {
	data := t.TempDir()
	keys := make(chan ClientKey, 8)
	for range 8 {
		go func() {
			k, err := EnsureClientKey(data)
			if err != nil {
				t.Error(err)
			}
			keys <- k
		}()
	}
	first := <-keys
	for range 7 {
		if k := <-keys; k != first {
			t.Errorf("two keys: %q and %q", first.Public, k.Public)
		}
	}
}
