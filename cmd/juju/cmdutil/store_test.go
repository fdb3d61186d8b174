package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
)

func TestStoreControllers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "juju")
	s := NewStore(dir)
	if names, err := s.ControllerNames(); err != nil || len(names) != 0 {
		t.Fatalf("empty store: %v, %v", names, err)
	}
	d := ControllerDetails{UUID: "u1", APIEndpoints: []string{"127.0.0.1:17070"}, CACert: "PEM", Cloud: "localhost"}
	if err := s.AddController("local", d); err != nil {
		t.Fatal(err)
	}
	if err := s.AddController("local", d); !errors.Is(err, apierr.AlreadyExists) {
		t.Errorf("second AddController = %v, want AlreadyExists", err)
	}
	if err := s.SetCurrentController("local"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCurrentController("nope"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("SetCurrentController(nope) = %v, want NotFound", err)
	}
	got, err := s.ControllerByName("local")
	if err != nil || got.UUID != "u1" || got.APIEndpoints[0] != "127.0.0.1:17070" {
		t.Fatalf("ControllerByName = %+v, %v", got, err)
	}
	if _, err := s.ControllerByName("x"); err == nil || err.Error() != `controller "x" not found` {
		t.Errorf("ControllerByName(x) = %v", err)
	}
	if cur, _ := s.CurrentController(); cur != "local" {
		t.Errorf("current = %q", cur)
	}

	if err := s.UpdateAccount("local", AccountDetails{User: "admin", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateModel("local", "default", ModelDetails{UUID: "m1", Type: "iaas"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCurrentModel("local", "default"); err != nil {
		t.Fatal(err)
	}
	if m, err := s.CurrentModel("local"); err != nil || m != "default" {
		t.Errorf("CurrentModel = %q, %v", m, err)
	}

	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("store dir mode = %v, %v; want 0700", info.Mode().Perm(), err)
	}
	for _, name := range []string{controllersYAML, accountsYAML, modelsYAML} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, %v; want 0600", name, info.Mode().Perm(), err)
		}
	}

	if err := s.RemoveController("local"); err != nil {
		t.Fatal(err)
	}
	if cur, _ := s.CurrentController(); cur != "" {
		t.Errorf("current after removal = %q", cur)
	}
	if _, err := s.AccountDetails("local"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("account after removal: %v", err)
	}
	if models, _, _ := s.AllModels("local"); len(models) != 0 {
		t.Errorf("models after removal: %v", models)
	}
}

func TestStoreSetModelsDropsVanishedCurrent(t *testing.T) {
	s := NewStore(t.TempDir())
	_ = s.UpdateModel("c", "gone", ModelDetails{UUID: "g"})
	_ = s.SetCurrentModel("c", "gone")
	if err := s.SetModels("c", map[string]ModelDetails{"default": {UUID: "d"}}); err != nil {
		t.Fatal(err)
	}
	models, current, err := s.AllModels("c")
	if err != nil || current != "" || len(models) != 1 {
		t.Errorf("after SetModels: %v, %q, %v", models, current, err)
	}
}

func TestStoreCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, controllersYAML), []byte("controllers: [oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore(dir).CurrentController(); err == nil {
		t.Error("corrupt controllers.yaml read without error")
	}
}
