// Package cmdutil holds what every juju command shares: the Factory of lazily built
// dependencies, configuration resolution (the only viper user), the client store, usage
// errors and common flags.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/output"
)

// Config is the resolved configuration of one juju invocation: flag > environment > files.
type Config struct {
	// DataDir is $JUJU_DATA, by default ~/.local/share/juju.
	DataDir string
	// Controller is the controller to talk to: from -m <controller>:, -c, $JUJU_CONTROLLER or
	// the store's current controller.
	Controller string
	// Model is the model name (no owner, no controller): from -m, $JUJU_MODEL or the
	// controller's current model.
	Model string
	// Repository is $JUJU_REPOSITORY, where deploy looks up bare charm names.
	Repository string
}

// ModelRef identifies a resolved model.
type ModelRef struct {
	Controller string
	Name       string
	UUID       string
	Owner      string
	Type       string
}

// Qualified returns owner/name, as Juju shows models.
func (m *ModelRef) Qualified() string { return m.Owner + "/" + m.Name }

// String returns controller:owner/name.
func (m *ModelRef) String() string { return m.Controller + ":" + m.Qualified() }

// Factory builds a command's dependencies lazily, so that a command that fails validation, or
// only prints help, never reads files or dials.
type Factory struct {
	IO *output.Streams
	// Config resolves the configuration once, on first use.
	Config func() (*Config, error)
	// Client returns a client of the current controller (see Config), dialled on first use.
	Client func(ctx context.Context) (*client.Client, error)
	// Connect returns a client of the named controller, dialled on first use.
	Connect func(ctx context.Context, controller string) (*client.Client, error)
	// Model resolves the model commands act on (see Config), asking the controller and
	// caching the answer when the store does not know it.
	Model func(ctx context.Context) (*ModelRef, error)
	Store *Store
	Now   func() time.Time

	v       *viper.Viper
	flags   *pflag.FlagSet
	mu      sync.Mutex
	clients map[string]*client.Client
	// degraded: the controller's degraded warning is printed once per command, not per call.
	degraded sync.Once
}

// Dial timeouts used by the factory's clients.
const (
	callTimeout = 30 * time.Second
	dialTimeout = 5 * time.Second
)

// NewFactory returns the factory of the real CLI.
func NewFactory(s *output.Streams) *Factory {
	v := viper.New()
	_ = v.BindEnv("data-dir", "JUJU_DATA")
	_ = v.BindEnv("controller", "JUJU_CONTROLLER")
	_ = v.BindEnv("model", "JUJU_MODEL")
	_ = v.BindEnv("repository", "JUJU_REPOSITORY")
	dataDir := v.GetString("data-dir")
	if dataDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dataDir = filepath.Join(home, ".local", "share", "juju")
	}
	f := &Factory{
		IO:      s,
		Store:   NewStore(dataDir),
		Now:     time.Now,
		v:       v,
		clients: map[string]*client.Client{},
	}
	f.Config = sync.OnceValues(f.loadConfig)
	f.Connect = f.connect
	f.Client = func(ctx context.Context) (*client.Client, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		if err := f.checkController(cfg.Controller); err != nil {
			return nil, err
		}
		return f.connect(ctx, cfg.Controller)
	}
	f.Model = f.resolveModel
	return f
}

// BindFlags makes the -m/--model and -c/--controller flags of the command about to run take
// precedence in Config. root calls it before any command runs.
func (f *Factory) BindFlags(fs *pflag.FlagSet) { f.flags = fs }

// Close closes the clients the factory dialled.
func (f *Factory) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, c := range f.clients {
		_ = c.Close()
		delete(f.clients, name)
	}
}

func (f *Factory) loadConfig() (*Config, error) {
	if f.flags != nil {
		for _, key := range []string{"model", "controller"} {
			if fl := f.flags.Lookup(key); fl != nil {
				_ = f.v.BindPFlag(key, fl)
			}
		}
	}
	current, err := f.Store.CurrentController()
	if err != nil {
		return nil, err
	}
	f.v.SetDefault("controller", current)

	cfg := &Config{DataDir: f.Store.Dir, Repository: f.v.GetString("repository")}
	ctrl, model := SplitModel(f.v.GetString("model"))
	if ctrl == "" {
		ctrl = f.v.GetString("controller")
	}
	cfg.Controller = ctrl
	if model == "" && ctrl != "" {
		if model, err = f.Store.CurrentModel(ctrl); err != nil {
			return nil, err
		}
	}
	cfg.Model = model
	return cfg, nil
}

// SplitModel splits [<controller>:][<owner>/]<model> into the controller and the model name.
func SplitModel(spec string) (controller, model string) {
	if i := strings.Index(spec, ":"); i >= 0 {
		controller, spec = spec[:i], spec[i+1:]
	}
	if i := strings.LastIndex(spec, "/"); i >= 0 {
		spec = spec[i+1:]
	}
	return controller, spec
}

// ErrNoControllers is returned when the store knows no controller at all. Juju's advice also
// names "juju register", which this CLI does not have: only bootstrap makes a controller known.
var ErrNoControllers = errors.New(`No controllers registered.

Please create a new controller using "juju bootstrap localhost".`)

// ErrNoCurrentController is returned when controllers are known but none is selected.
var ErrNoCurrentController = errors.New(`No selected controller.

Please use "juju switch" to select a controller.`)

// checkController explains why there is no controller to talk to.
func (f *Factory) checkController(name string) error {
	if name != "" {
		_, err := f.Store.ControllerByName(name)
		return err
	}
	names, err := f.Store.ControllerNames()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return ErrNoControllers
	}
	return ErrNoCurrentController
}

func (f *Factory) connect(ctx context.Context, name string) (*client.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.clients[name]; ok {
		return c, nil
	}
	if err := f.checkController(name); err != nil {
		return nil, err
	}
	configs, err := f.endpointConfigs(name)
	if err != nil {
		return nil, err
	}
	for i := range configs {
		configs[i].Timeout, configs[i].DialTimeout = callTimeout, dialTimeout
		configs[i].OnDegraded = f.warnDegraded
	}
	// Every address the store knows, staggered, each within dialTimeout: a controller that
	// moved or lost one of its HA members is still reached through the others.
	c, err := client.DialAny(ctx, configs)
	if err != nil {
		return nil, err
	}
	f.rememberEndpoints(name, c.Endpoint(), c.LoginVersion().GetApiAddresses())
	f.clients[name] = c
	return c, nil
}

// rememberEndpoints makes controllers.yaml list the API addresses the controller gave at login
// (every member's), the address that answered first, as Juju keeps them: the next connection
// tries every member and starts with one that answered. No extra call: they come with the login.
// Best effort: a store that cannot be written keeps its list, which works while any of its
// addresses does.
func (f *Factory) rememberEndpoints(name, dialled string, addrs []string) {
	if len(addrs) == 0 {
		return // a controller without members reports none
	}
	eps := append([]string{dialled}, slices.DeleteFunc(slices.Clone(addrs), func(a string) bool { return a == dialled })...)
	_ = f.Store.ModifyController(name, func(d *ControllerDetails) bool {
		if slices.Equal(d.APIEndpoints, eps) {
			return false
		}
		d.APIEndpoints = eps
		return true
	})
}

// warnDegraded says on stderr that the controller answering is degraded: what it shows may be
// stale, and what would change something is refused (apierr.NoQuorum, an ERROR of its own).
func (f *Factory) warnDegraded(reason string) {
	f.degraded.Do(func() { f.IO.Warningf("controller degraded: %s", reason) })
}

// endpointConfigs are the client configurations of the named controller, one per API endpoint
// in the store's order, with the account's credentials.
func (f *Factory) endpointConfigs(name string) ([]client.Config, error) {
	d, err := f.Store.ControllerByName(name)
	if err != nil {
		return nil, err
	}
	acct, err := f.Store.AccountDetails(name)
	if err != nil {
		return nil, err
	}
	if len(d.APIEndpoints) == 0 {
		return nil, fmt.Errorf("controller %q has no API endpoints", name)
	}
	configs := make([]client.Config, len(d.APIEndpoints))
	for i, ep := range d.APIEndpoints {
		configs[i] = client.Config{Endpoint: ep, CACert: []byte(d.CACert), Tag: "user-" + acct.User, Password: acct.Password}
	}
	return configs, nil
}

func (f *Factory) resolveModel(ctx context.Context) (*ModelRef, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if err := f.checkController(cfg.Controller); err != nil {
		return nil, err
	}
	return f.LookupModel(ctx, cfg.Controller, cfg.Model)
}

// LookupModel resolves a model of a controller by name or UUID: from the store, else from the
// controller, caching what it says.
func (f *Factory) LookupModel(ctx context.Context, controller, name string) (*ModelRef, error) {
	if name == "" {
		return nil, errors.New(`No selected model.

Use "juju switch" to select a model, or -m to name one.`)
	}
	acct, err := f.Store.AccountDetails(controller)
	if err != nil {
		return nil, err
	}
	models, _, err := f.Store.AllModels(controller)
	if err != nil {
		return nil, err
	}
	if d, ok := models[name]; ok {
		return &ModelRef{Controller: controller, Name: name, UUID: d.UUID, Owner: acct.User, Type: d.Type}, nil
	}
	for n, d := range models {
		if d.UUID == name {
			return &ModelRef{Controller: controller, Name: n, UUID: d.UUID, Owner: acct.User, Type: d.Type}, nil
		}
	}
	c, err := f.Connect(ctx, controller)
	if err != nil {
		return nil, err
	}
	m, err := c.GetModel(ctx, name)
	if errors.Is(err, apierr.NotFound) {
		return nil, apierr.Errorf(apierr.NotFound, "model %s:%s/%s not found", controller, acct.User, name)
	}
	if err != nil {
		return nil, fmt.Errorf("looking up model %q: %w", name, err)
	}
	if err := f.Store.UpdateModel(controller, m.GetName(), ModelDetails{UUID: m.GetUuid(), Type: modelType(m.GetType())}); err != nil {
		return nil, err
	}
	owner := m.GetOwner()
	if owner == "" {
		owner = acct.User
	}
	return &ModelRef{Controller: controller, Name: m.GetName(), UUID: m.GetUuid(), Owner: owner, Type: modelType(m.GetType())}, nil
}

func modelType(t string) string {
	if t == "" {
		return "iaas"
	}
	return t
}

// AddModelFlag registers -m/--model on cmd.
func AddModelFlag(cmd *cobra.Command, model *string) {
	cmd.Flags().StringVarP(model, "model", "m", "", "Model to operate in. Accepts [<controller name>:]<model name>|<model UUID>")
}

// AddControllerFlag registers -c/--controller on cmd.
func AddControllerFlag(cmd *cobra.Command, controller *string) {
	cmd.Flags().StringVarP(controller, "controller", "c", "", "Controller to operate in")
}

// TestFactory returns a factory for flag tests: test streams (the buffers are IO.Out and
// IO.ErrOut), a fixed configuration (controller "test", model "default") and no client.
func TestFactory() *Factory {
	s, _, _ := output.TestStreams()
	cfg := &Config{DataDir: filepath.Join(os.TempDir(), "juju-test-factory-unused"), Controller: "test", Model: "default"}
	noClient := errors.New("no client in tests")
	f := &Factory{
		IO:      s,
		Store:   NewStore(cfg.DataDir),
		Now:     func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) },
		v:       viper.New(),
		clients: map[string]*client.Client{},
	}
	f.Config = func() (*Config, error) { return cfg, nil }
	f.Client = func(context.Context) (*client.Client, error) { return nil, noClient }
	f.Connect = func(context.Context, string) (*client.Client, error) { return nil, noClient }
	f.Model = func(context.Context) (*ModelRef, error) {
		return &ModelRef{Controller: "test", Name: "default", UUID: "model-uuid", Owner: "admin", Type: "iaas"}, nil
	}
	return f
}

// ClientFunc adapts the factory's lazy client to the narrow interface T a command declares
// (each command asserts at compile time that *client.Client implements its T).
func ClientFunc[T any](f *Factory) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) {
		var none T
		c, err := f.Client(ctx)
		if err != nil {
			return none, err
		}
		t, ok := any(c).(T)
		if !ok {
			return none, fmt.Errorf("the controller client lacks methods this command needs")
		}
		return t, nil
	}
}
