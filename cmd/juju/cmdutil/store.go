package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// Store is the client store under $JUJU_DATA: controllers.yaml, accounts.yaml (0600) and
// models.yaml. Every change is a locked read-modify-write of one file, written atomically
// (temporary file + rename), so concurrent juju processes do not lose each other's updates.
type Store struct {
	Dir string
}

// NewStore returns the store in dir; nothing is read or created until used.
func NewStore(dir string) *Store { return &Store{Dir: dir} }

// ControllerDetails is what the client knows about a controller.
type ControllerDetails struct {
	UUID         string   `yaml:"uuid"`
	APIEndpoints []string `yaml:"api-endpoints,flow"`
	CACert       string   `yaml:"ca-cert"`
	Cloud        string   `yaml:"cloud"`
	Region       string   `yaml:"region,omitempty"`
	AgentVersion string   `yaml:"agent-version,omitempty"`
	// DataDir is the data directory of a local controller started by bootstrap.
	DataDir string `yaml:"data-dir,omitempty"`
	// PIDFile holds the process id of a local controller's jujud.
	PIDFile string `yaml:"pid-file,omitempty"`
	// ControllerMachineCount and ActiveControllerMachineCount are the controller's members
	// and how many of them take part in HA, as last seen (Juju's keys): "juju controllers"
	// shows them without connecting.
	ControllerMachineCount       int `yaml:"controller-machine-count"`
	ActiveControllerMachineCount int `yaml:"active-controller-machine-count"`
	// MachineCount is how many machines the controller's models had, as last seen.
	MachineCount *int `yaml:"machine-count,omitempty"`
}

// AccountDetails is the credential used with a controller.
type AccountDetails struct {
	User     string `yaml:"user"`
	Password string `yaml:"password"`
}

// ModelDetails is what the client caches about a model.
type ModelDetails struct {
	UUID string `yaml:"uuid"`
	Type string `yaml:"type"`
}

type controllersFile struct {
	Controllers       map[string]ControllerDetails `yaml:"controllers"`
	CurrentController string                       `yaml:"current-controller,omitempty"`
}

type accountsFile struct {
	Controllers map[string]AccountDetails `yaml:"controllers"`
}

type controllerModels struct {
	Models       map[string]ModelDetails `yaml:"models"`
	CurrentModel string                  `yaml:"current-model,omitempty"`
}

type modelsFile struct {
	Controllers map[string]*controllerModels `yaml:"controllers"`
}

const (
	controllersYAML = "controllers.yaml"
	accountsYAML    = "accounts.yaml"
	modelsYAML      = "models.yaml"
)

// read decodes the named file into v; a missing file leaves v as it is.
func (s *Store) read(name string, v any) error {
	data, err := os.ReadFile(filepath.Join(s.Dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(s.Dir, name), err)
	}
	return nil
}

// write encodes v into the named file atomically, mode 0600, creating the store directory
// (0700) when needed.
func (s *Store) write(name string, v any) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", s.Dir, err)
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	return atomicfile.Write(filepath.Join(s.Dir, name), data, 0o600)
}

// locked runs fn holding the store's lock file, for read-modify-write updates.
func (s *Store) locked(fn func() error) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", s.Dir, err)
	}
	lf, err := os.OpenFile(filepath.Join(s.Dir, ".store.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("locking the client store: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the client store: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return fn()
}

func (s *Store) controllers() (*controllersFile, error) {
	f := &controllersFile{}
	if err := s.read(controllersYAML, f); err != nil {
		return nil, err
	}
	if f.Controllers == nil {
		f.Controllers = map[string]ControllerDetails{}
	}
	return f, nil
}

func (s *Store) updateControllers(fn func(*controllersFile) error) error {
	return s.locked(func() error {
		f, err := s.controllers()
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		return s.write(controllersYAML, f)
	})
}

// AllControllers returns every known controller and the current one's name.
func (s *Store) AllControllers() (map[string]ControllerDetails, string, error) {
	f, err := s.controllers()
	if err != nil {
		return nil, "", err
	}
	return f.Controllers, f.CurrentController, nil
}

// ControllerNames returns the known controllers' names, sorted.
func (s *Store) ControllerNames() ([]string, error) {
	all, _, err := s.AllControllers()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// CurrentController returns the current controller's name, "" when none is selected.
func (s *Store) CurrentController() (string, error) {
	f, err := s.controllers()
	if err != nil {
		return "", err
	}
	return f.CurrentController, nil
}

// ControllerByName returns a controller's details; the error wraps apierr.NotFound when the
// controller is unknown.
func (s *Store) ControllerByName(name string) (*ControllerDetails, error) {
	f, err := s.controllers()
	if err != nil {
		return nil, err
	}
	d, ok := f.Controllers[name]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "controller %q not found", name)
	}
	return &d, nil
}

// AddController records a new controller; the error wraps apierr.AlreadyExists when the name
// is taken.
func (s *Store) AddController(name string, d ControllerDetails) error {
	return s.updateControllers(func(f *controllersFile) error {
		if _, ok := f.Controllers[name]; ok {
			return apierr.Errorf(apierr.AlreadyExists, "controller %q already exists", name)
		}
		f.Controllers[name] = d
		return nil
	})
}

// UpdateController records or replaces a controller's details.
func (s *Store) UpdateController(name string, d ControllerDetails) error {
	return s.updateControllers(func(f *controllersFile) error {
		f.Controllers[name] = d
		return nil
	})
}

// ModifyController changes a known controller's details in one locked read-modify-write, so
// that what other juju processes wrote meanwhile is kept; fn reports whether it changed
// anything (nothing is written otherwise). The error wraps apierr.NotFound when the controller
// is unknown.
func (s *Store) ModifyController(name string, fn func(d *ControllerDetails) bool) error {
	return s.locked(func() error {
		f, err := s.controllers()
		if err != nil {
			return err
		}
		d, ok := f.Controllers[name]
		if !ok {
			return apierr.Errorf(apierr.NotFound, "controller %q not found", name)
		}
		if !fn(&d) {
			return nil
		}
		f.Controllers[name] = d
		return s.write(controllersYAML, f)
	})
}

// SetCurrentController selects a known controller.
func (s *Store) SetCurrentController(name string) error {
	return s.updateControllers(func(f *controllersFile) error {
		if _, ok := f.Controllers[name]; !ok {
			return apierr.Errorf(apierr.NotFound, "controller %q not found", name)
		}
		f.CurrentController = name
		return nil
	})
}

// RemoveController forgets a controller, its account and its models; it is no longer current.
func (s *Store) RemoveController(name string) error {
	if err := s.updateControllers(func(f *controllersFile) error {
		delete(f.Controllers, name)
		if f.CurrentController == name {
			f.CurrentController = ""
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.updateAccounts(func(f *accountsFile) error {
		delete(f.Controllers, name)
		return nil
	}); err != nil {
		return err
	}
	return s.updateModels(func(f *modelsFile) error {
		delete(f.Controllers, name)
		return nil
	})
}

func (s *Store) accounts() (*accountsFile, error) {
	f := &accountsFile{}
	if err := s.read(accountsYAML, f); err != nil {
		return nil, err
	}
	if f.Controllers == nil {
		f.Controllers = map[string]AccountDetails{}
	}
	return f, nil
}

func (s *Store) updateAccounts(fn func(*accountsFile) error) error {
	return s.locked(func() error {
		f, err := s.accounts()
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		return s.write(accountsYAML, f)
	})
}

// AccountDetails returns the credential for a controller; the error wraps apierr.NotFound
// when there is none.
func (s *Store) AccountDetails(controller string) (*AccountDetails, error) {
	f, err := s.accounts()
	if err != nil {
		return nil, err
	}
	a, ok := f.Controllers[controller]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "account for controller %q not found", controller)
	}
	return &a, nil
}

// UpdateAccount records the credential for a controller.
func (s *Store) UpdateAccount(controller string, a AccountDetails) error {
	return s.updateAccounts(func(f *accountsFile) error {
		f.Controllers[controller] = a
		return nil
	})
}

func (s *Store) models() (*modelsFile, error) {
	f := &modelsFile{}
	if err := s.read(modelsYAML, f); err != nil {
		return nil, err
	}
	if f.Controllers == nil {
		f.Controllers = map[string]*controllerModels{}
	}
	return f, nil
}

func (s *Store) updateModels(fn func(*modelsFile) error) error {
	return s.locked(func() error {
		f, err := s.models()
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		return s.write(modelsYAML, f)
	})
}

func (f *modelsFile) controller(name string) *controllerModels {
	cm := f.Controllers[name]
	if cm == nil {
		cm = &controllerModels{}
		f.Controllers[name] = cm
	}
	if cm.Models == nil {
		cm.Models = map[string]ModelDetails{}
	}
	return cm
}

// AllModels returns the models cached for a controller and its current model.
func (s *Store) AllModels(controller string) (map[string]ModelDetails, string, error) {
	f, err := s.models()
	if err != nil {
		return nil, "", err
	}
	cm := f.controller(controller)
	return cm.Models, cm.CurrentModel, nil
}

// ModelByName returns a cached model; the error wraps apierr.NotFound when it is not cached.
func (s *Store) ModelByName(controller, name string) (*ModelDetails, error) {
	models, _, err := s.AllModels(controller)
	if err != nil {
		return nil, err
	}
	m, ok := models[name]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "model %s:%s not found", controller, name)
	}
	return &m, nil
}

// CurrentModel returns a controller's current model, "" when none is selected.
func (s *Store) CurrentModel(controller string) (string, error) {
	_, current, err := s.AllModels(controller)
	return current, err
}

// UpdateModel caches a model.
func (s *Store) UpdateModel(controller, name string, d ModelDetails) error {
	return s.updateModels(func(f *modelsFile) error {
		f.controller(controller).Models[name] = d
		return nil
	})
}

// SetModels replaces a controller's cached models with what it reported, keeping the current
// model only if it still exists.
func (s *Store) SetModels(controller string, models map[string]ModelDetails) error {
	return s.updateModels(func(f *modelsFile) error {
		cm := f.controller(controller)
		cm.Models = models
		if _, ok := models[cm.CurrentModel]; !ok {
			cm.CurrentModel = ""
		}
		return nil
	})
}

// SetCurrentModel selects a controller's current model ("" for none).
func (s *Store) SetCurrentModel(controller, name string) error {
	return s.updateModels(func(f *modelsFile) error {
		f.controller(controller).CurrentModel = name
		return nil
	})
}

// RemoveModel forgets a cached model.
func (s *Store) RemoveModel(controller, name string) error {
	return s.updateModels(func(f *modelsFile) error {
		cm := f.controller(controller)
		delete(cm.Models, name)
		if cm.CurrentModel == name {
			cm.CurrentModel = ""
		}
		return nil
	})
}
