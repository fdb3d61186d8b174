// Package controller holds the commands that create, list and destroy controllers.
package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/internal/atomicfile"
	"github.com/jujuclone/juju/output"
)

const (
	localCloud     = "localhost"
	defaultName    = "local"
	initialModel   = "default"
	bootstrapFile  = "bootstrap.json"
	jujudLog       = "jujud.log"
	pidFile        = "jujud.pid"
	pollInterval   = 20 * time.Millisecond
	startupTimeout = 30 * time.Second
)

// bootstrapInfo is what jujud writes to <data-dir>/bootstrap.json once it serves the API.
type bootstrapInfo struct {
	ControllerUUID string `json:"controller_uuid"`
	APIAddr        string `json:"api_addr"`
	CACert         string `json:"ca_cert"`
	AdminTag       string `json:"admin_tag"`
	AdminPassword  string `json:"admin_password"`
	PID            int    `json:"pid"`
	Models         []struct {
		Name string `json:"name"`
		UUID string `json:"uuid"`
	} `json:"models"`
}

// process is a started jujud.
type process struct {
	PID int
	// Exited receives the process's exit error, once.
	Exited <-chan error
	// Stop asks the process to terminate.
	Stop func()
}

// versioner is the part of client.Client bootstrap uses to check the controller answers.
type versioner interface {
	Version(ctx context.Context) (*jujupb.VersionResponse, error)
	Close() error
}

type bootstrapOptions struct {
	IO      *output.Streams
	Store   *cmdutil.Store
	Cloud   string
	Name    string
	APIPort int
	// NoSwitch keeps the current controller: the new one is only recorded.
	NoSwitch bool
	// ModelDefaults are --model-default's values (files read, later values winning), checked
	// as model configuration.
	ModelDefaults map[string]string

	// FindJujud locates the jujud binary.
	FindJujud func() (string, error)
	// Launch starts jujud detached, its output appended to logPath.
	Launch func(bin string, args []string, logPath string) (*process, error)
	// Dial connects to the new controller.
	Dial func(ctx context.Context, cfg client.Config) (versioner, error)
	// Poll and Timeout pace the wait for bootstrap.json.
	Poll, Timeout time.Duration
	// Euid is the user jujud will run as (this process's: os.Geteuid).
	Euid func() int
}

// NewCmdBootstrap returns "juju bootstrap [cloud] [name]": start a local controller.
func NewCmdBootstrap(f *cmdutil.Factory, runF func(*bootstrapOptions) error) *cobra.Command {
	var modelDefaults []string
	opts := &bootstrapOptions{
		IO:        f.IO,
		Store:     f.Store,
		FindJujud: findJujud,
		Launch:    launchJujud,
		Dial: func(ctx context.Context, cfg client.Config) (versioner, error) {
			return client.Dial(ctx, cfg)
		},
		Poll:    pollInterval,
		Timeout: startupTimeout,
		Euid:    os.Geteuid,
	}
	cmd := &cobra.Command{
		Use:   "bootstrap [<cloud>] [<controller name>]",
		Short: "Start a controller on this machine",
		Long: `Start a controller on this machine: jujud runs in the background with its data under
$JUJU_DATA/controllers/<name>, listening on a loopback port. The controller gets the models
"controller" and "default", and becomes the current controller with "default" as current model
(--no-switch records it without changing the current controller). --model-default sets the
configuration every model inherits (see juju model-defaults and juju model-config --help).

The only cloud is "localhost"; the controller name defaults to "local". As in Juju, a
controller name has lowercase letters, digits and hyphens, and does not start with a hyphen.

Progress goes to stderr (--quiet hides it). If the controller does not answer within
--timeout (default 30s), bootstrap stops it and fails, quoting the end of its log.`,
		Example: `  juju bootstrap
  juju bootstrap localhost dev --api-port 17070
  juju bootstrap --timeout 2m
  juju bootstrap localhost ci --no-switch
  juju bootstrap localhost ci --model-default automatically-retry-hooks=false`,
		Annotations: map[string]string{cmdutil.SeeAlso: "controllers, kill-controller, add-model, whoami, status"},
		Args:        cmdutil.MaxArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cloud, opts.Name = localCloud, defaultName
			if len(args) > 0 {
				opts.Cloud = args[0]
			}
			if len(args) > 1 {
				opts.Name = args[1]
			}
			if opts.Cloud != localCloud {
				return cmdutil.FlagErrorf("unknown cloud %q; only %q is supported", opts.Cloud, localCloud)
			}
			if !names.IsValidController(opts.Name) {
				// Juju's words (its controller-config check of controller-name).
				return cmdutil.FlagErrorf("controller-name value must be a valid controller name (lowercase or digit with non-leading hyphen), got %q", opts.Name)
			}
			if opts.APIPort < 0 || opts.APIPort > 65535 {
				return cmdutil.FlagErrorf("--api-port must be between 0 and 65535")
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			defaults, err := parseModelDefaults(opts.IO.In, modelDefaults)
			if err != nil {
				return err
			}
			opts.ModelDefaults = defaults
			if runF != nil {
				return runF(opts)
			}
			return bootstrapRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.APIPort, "api-port", 0, "Port of the controller API on 127.0.0.1 (0 picks a free port)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", startupTimeout, "How long to wait for the controller to answer")
	cmd.Flags().BoolVar(&opts.NoSwitch, "no-switch", false, "Do not switch to the newly created controller")
	cmd.Flags().StringArrayVar(&modelDefaults, "model-default", nil, "Specify a configuration file, or one or more configuration options, every model inherits (--model-default config.yaml [--model-default key=value ...])")
	return cmd
}

// parseModelDefaults reads --model-default's arguments, each key=value or a YAML file of
// keys (as juju model-defaults --file reads it), later ones winning, and checks them all as
// model configuration, so that a bad value fails before a controller starts.
func parseModelDefaults(stdin io.Reader, args []string) (map[string]string, error) {
	var out map[string]string
	for _, a := range args {
		values := map[string]string{}
		if key, value, ok := strings.Cut(a, "="); ok {
			if key == "" {
				return nil, cmdutil.FlagErrorf(`--model-default: expected "key=value" or a file, got %q`, a)
			}
			values[key] = value
		} else {
			read, err := cmdutil.ReadConfigFile(stdin, a)
			if err != nil {
				return nil, cmdutil.FlagErrorf("--model-default: %v", err)
			}
			values = read
		}
		if out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, values)
	}
	canonical, err := modelconfig.Apply(nil, out, nil)
	if err != nil {
		return nil, cmdutil.FlagErrorf("--model-default: %v", err)
	}
	if len(canonical) == 0 {
		return nil, nil
	}
	return canonical, nil
}

func bootstrapRun(ctx context.Context, opts *bootstrapOptions) error {
	if _, err := opts.Store.ControllerByName(opts.Name); err == nil {
		return fmt.Errorf("controller %q already exists", opts.Name)
	}
	bin, err := opts.FindJujud()
	if err != nil {
		return err
	}
	dir := filepath.Join(opts.Store.Dir, "controllers", opts.Name)
	if err := prepareDataDir(dir); err != nil {
		return err
	}
	opts.IO.Infof("Creating Juju controller %q on %s", opts.Name, opts.Cloud)
	if uid := opts.Euid(); uid != 0 {
		// Only a root controller can give each machine a uid of its own (docs/architecture.md).
		opts.IO.Warningf("not running as root (uid %d): the controller's machines get no uid of their own, so hooks run as uid %d and can read the controller's files", uid, uid)
	}

	logPath := filepath.Join(dir, jujudLog)
	args := []string{
		"--data-dir", dir,
		"--controller-name", opts.Name,
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", opts.APIPort),
	}
	for _, k := range slices.Sorted(maps.Keys(opts.ModelDefaults)) {
		args = append(args, "--model-default", k+"="+opts.ModelDefaults[k])
	}
	proc, err := opts.Launch(bin, args, logPath)
	if err != nil {
		return fmt.Errorf("starting jujud: %w", err)
	}
	info, err := waitForController(ctx, opts, dir, proc)
	if err == nil {
		err = recordController(ctx, opts, dir, proc, info)
	}
	if err != nil {
		proc.Stop()
		return err
	}
	opts.IO.Infof("Bootstrap complete, controller %q is now available", opts.Name)
	opts.IO.Infof("Initial model %q added", initialModel)
	return nil
}

// prepareDataDir creates the controller's data directory (0700). A directory left behind by
// a controller that is not in the store is reused only if no jujud still runs from it.
func prepareDataDir(dir string) error {
	if info, err := readBootstrapInfo(dir); err == nil && info.PID > 0 && processAlive(info.PID) {
		return fmt.Errorf("a controller is already running from %s (pid %d); stop it first", dir, info.PID)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing stale controller directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating controller directory: %w", err)
	}
	return os.Chmod(dir, 0o700)
}

// waitForController polls for bootstrap.json until jujud writes it, exits, or the timeout.
func waitForController(ctx context.Context, opts *bootstrapOptions, dir string, proc *process) (*bootstrapInfo, error) {
	deadline := time.NewTimer(opts.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	logPath := filepath.Join(dir, jujudLog)
	for {
		if info, err := readBootstrapInfo(dir); err == nil {
			return info, nil
		}
		select {
		case err := <-proc.Exited:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return nil, fmt.Errorf("jujud stopped before the controller was ready (%v)%s", err, logTail(logPath))
		case <-deadline.C:
			return nil, fmt.Errorf("controller did not start within %s%s", opts.Timeout, logTail(logPath))
		case <-ctx.Done():
			return nil, fmt.Errorf("bootstrap interrupted: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// readBootstrapInfo reads a complete bootstrap.json; a partly written one is an error.
func readBootstrapInfo(dir string) (*bootstrapInfo, error) {
	data, err := os.ReadFile(filepath.Join(dir, bootstrapFile))
	if err != nil {
		return nil, err
	}
	var info bootstrapInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, err
	}
	if info.APIAddr == "" || info.CACert == "" || info.AdminTag == "" {
		return nil, errors.New("bootstrap.json incomplete")
	}
	return &info, nil
}

// recordController checks the controller answers, then records it in the store as current.
func recordController(ctx context.Context, opts *bootstrapOptions, dir string, proc *process, info *bootstrapInfo) error {
	c, err := opts.Dial(ctx, client.Config{
		Endpoint: info.APIAddr,
		CACert:   []byte(info.CACert),
		Tag:      info.AdminTag,
		Password: info.AdminPassword,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Version(ctx)
	if err != nil {
		return fmt.Errorf("checking the new controller: %w", err)
	}
	pid := info.PID
	if pid == 0 {
		pid = proc.PID
	}
	pidPath := filepath.Join(dir, pidFile)
	if err := atomicfile.Write(pidPath, fmt.Appendf(nil, "%d\n", pid), 0o600); err != nil {
		return err
	}
	uuid := info.ControllerUUID
	if uuid == "" {
		uuid = v.GetControllerUuid()
	}
	if err := opts.Store.AddController(opts.Name, cmdutil.ControllerDetails{
		UUID:         uuid,
		APIEndpoints: []string{info.APIAddr},
		CACert:       info.CACert,
		Cloud:        localCloud,
		Region:       localCloud,
		AgentVersion: v.GetVersion(),
		DataDir:      dir,
		PIDFile:      pidPath,
		// One member, as Juju records its bootstrap machine: "juju controllers" says HA none.
		ControllerMachineCount:       1,
		ActiveControllerMachineCount: 1,
	}); err != nil {
		return err
	}
	if err := opts.Store.UpdateAccount(opts.Name, cmdutil.AccountDetails{
		User:     strings.TrimPrefix(info.AdminTag, "user-"),
		Password: info.AdminPassword,
	}); err != nil {
		return err
	}
	models := map[string]cmdutil.ModelDetails{}
	for _, m := range info.Models {
		models[m.Name] = cmdutil.ModelDetails{UUID: m.UUID, Type: "iaas"}
	}
	if err := opts.Store.SetModels(opts.Name, models); err != nil {
		return err
	}
	// The new controller's current model is "default" either way; --no-switch only leaves the
	// current controller as it was.
	if err := opts.Store.SetCurrentModel(opts.Name, initialModel); err != nil {
		return err
	}
	if opts.NoSwitch {
		return nil
	}
	return opts.Store.SetCurrentController(opts.Name)
}

// logTail returns the last lines of jujud's log, to explain a failed start.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "\n" + path + ":\n" + strings.Join(lines, "\n")
}

// findJujud looks for jujud next to the running juju binary, then on $PATH.
func findJujud() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		candidate := filepath.Join(filepath.Dir(exe), "jujud")
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	if p, err := exec.LookPath("jujud"); err == nil {
		return p, nil
	}
	return "", errors.New("cannot find jujud next to juju or on $PATH")
}

// launchJujud starts jujud in its own session (so that it outlives juju and ignores the
// terminal's signals), stdin from /dev/null, stdout and stderr appended to logPath.
func launchJujud(bin string, args []string, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return &process{
		PID:    cmd.Process.Pid,
		Exited: exited,
		Stop:   func() { _ = cmd.Process.Signal(syscall.SIGTERM) },
	}, nil
}

// processAlive reports whether pid is a live jujud (not a zombie, not a recycled pid of some
// other program).
func processAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil {
		// Format: pid (comm) state ...
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(cmdline) > 0 {
		return bytes.Contains(cmdline, []byte("jujud"))
	}
	return true
}
