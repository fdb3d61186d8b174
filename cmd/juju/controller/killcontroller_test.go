package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdKillController(t *testing.T) {
	tests := []struct {
		args    string
		want    killControllerOptions
		wantErr string
	}{
		{args: "local", want: killControllerOptions{Name: "local", Timeout: 10 * time.Second}},
		{args: "local --no-prompt -t 3s", want: killControllerOptions{Name: "local", NoPrompt: true, Timeout: 3 * time.Second}},
		{args: "", wantErr: "no controller specified"},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
		{args: "a -t 0s", wantErr: "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *killControllerOptions
			cmd := NewCmdKillController(cmdutil.TestFactory(), func(o *killControllerOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			checkErr(t, err, tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Name != tt.want.Name || got.NoPrompt != tt.want.NoPrompt || got.Timeout != tt.want.Timeout {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeProcess is a jujud that dies after SIGTERM, or only after SIGKILL when stubborn.
type fakeProcess struct {
	alive    bool
	stubborn bool
	signals  []syscall.Signal
}

func (p *fakeProcess) signal(_ int, sig syscall.Signal) error {
	p.signals = append(p.signals, sig)
	if sig == syscall.SIGKILL || !p.stubborn {
		p.alive = false
	}
	return nil
}

func newKillOpts(t *testing.T, p *fakeProcess) (*killControllerOptions, string) {
	t.Helper()
	store := cmdutil.NewStore(t.TempDir())
	dataDir := filepath.Join(store.Dir, "controllers", "local")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dataDir, pidFile), []byte("4242\n"), 0o600)
	_ = store.AddController("local", cmdutil.ControllerDetails{DataDir: dataDir, PIDFile: filepath.Join(dataDir, pidFile)})
	_ = store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin"})
	_ = store.SetCurrentController("local")
	ios, _, _ := output.TestStreams()
	return &killControllerOptions{
		IO:       ios,
		Store:    store,
		Name:     "local",
		NoPrompt: true,
		Timeout:  20 * time.Millisecond,
		Signal:   p.signal,
		Alive:    func(pid int) bool { return pid == 4242 && p.alive },
		Poll:     time.Millisecond,
	}, dataDir
}

func TestKillControllerRun(t *testing.T) {
	for _, stubborn := range []bool{false, true} {
		p := &fakeProcess{alive: true, stubborn: stubborn}
		opts, dataDir := newKillOpts(t, p)
		if err := killControllerRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		want := []syscall.Signal{syscall.SIGTERM}
		if stubborn {
			want = append(want, syscall.SIGKILL)
		}
		if len(p.signals) != len(want) || p.signals[len(p.signals)-1] != want[len(want)-1] {
			t.Errorf("stubborn=%v: signals = %v, want %v", stubborn, p.signals, want)
		}
		if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
			t.Errorf("data dir still there: %v", err)
		}
		if names, _ := opts.Store.ControllerNames(); len(names) != 0 {
			t.Errorf("controllers after kill: %v", names)
		}
	}
}

func TestKillControllerRunErrors(t *testing.T) {
	p := &fakeProcess{alive: true}
	opts, _ := newKillOpts(t, p)
	opts.Name = "x"
	if err := killControllerRun(context.Background(), opts); err == nil || err.Error() != `controller "x" not found` {
		t.Errorf("unknown controller: %v", err)
	}

	opts.Name, opts.NoPrompt = "local", false
	if err := killControllerRun(context.Background(), opts); err == nil || !errors.Is(err, cmdutil.ErrNoTerminal) {
		t.Errorf("prompt off a terminal: %v", err)
	}

	opts.IO.InTerminal = true
	opts.IO.In = strings.NewReader("n\n")
	if err := killControllerRun(context.Background(), opts); err == nil || err.Error() != "controller destruction aborted" {
		t.Errorf("answer n: %v", err)
	}
	if len(p.signals) != 0 {
		t.Errorf("signals sent after abort: %v", p.signals)
	}
	if got := opts.IO.ErrOut.(interface{ String() string }).String(); !strings.Contains(got,
		"WARNING This command will destroy the \"local\" controller and all its resources\n\nContinue? (y/N): ") {
		t.Errorf("prompt = %q", got)
	}

	opts.IO.In = strings.NewReader("y\n")
	if err := killControllerRun(context.Background(), opts); err != nil {
		t.Errorf("answer y: %v", err)
	}
}
