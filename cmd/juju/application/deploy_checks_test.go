package application

import (
	"os"
	"path/filepath"
	"testing"
)

// A charm directory with a malformed hook is refused before anything is sent; a hook file that
// is never run is a warning.
func TestDeployRunChecksHooks(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(t *testing.T, path string)
		wantErr    string
		wantStderr string
	}{
		{name: "not executable", setup: func(t *testing.T, path string) {
			_ = os.Chmod(filepath.Join(path, "hooks", "install"), 0o644)
		}, wantErr: `charm "wordpress": hook "install" is not executable`},
		{name: "no interpreter line", setup: func(t *testing.T, path string) {
			_ = os.WriteFile(filepath.Join(path, "hooks", "start"), []byte("echo started\n"), 0o755)
		}, wantErr: `charm "wordpress": hook "start" has no interpreter line (#!)`},
		{name: "never run", setup: func(t *testing.T, path string) {
			_ = os.WriteFile(filepath.Join(path, "hooks", "instal"), []byte("#!/bin/sh\n"), 0o755)
			_ = os.WriteFile(filepath.Join(path, "hooks", "db-relation-changed"), []byte("#!/bin/sh\n"), 0o755)
		}, wantStderr: "WARNING charm \"wordpress\": hook \"instal\" is never run\n" +
			"Located local charm \"wordpress\", revision 3\n" +
			"Deploying \"wordpress\" from local charm \"wordpress\", revision 3 on ubuntu@22.04/stable\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			path := writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
			tt.setup(t, path)
			fake := &fakeDeployAPI{}
			stderr, err := deployWith(t, fake, "", "./wordpress")
			checkErr(t, err, tt.wantErr, false)
			if tt.wantErr != "" {
				if len(fake.calls) != 0 {
					t.Errorf("requests sent despite the error: %v", fake.calls)
				}
				return
			}
			if stderr != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr, tt.wantStderr)
			}
			if fake.req == nil {
				t.Error("not deployed")
			}
		})
	}
}

// --config values are checked against the charm's config.yaml before anything is sent.
func TestDeployRunChecksConfig(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	path := writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	tests := []struct{ args, wantErr string }{
		{"./wordpress --config colour=red", `invalid --config for "wordpress": unknown option "colour"`},
		{"./wordpress blog --config posts=many", `invalid --config for "blog": option "posts": expected int, got "many"`},
		{"./wordpress --config public=yes", `invalid --config for "wordpress": option "public": expected boolean, got "yes"`},
	}
	for _, tt := range tests {
		fake := &fakeDeployAPI{}
		_, err := deployWith(t, fake, "", tt.args)
		checkErr(t, err, tt.wantErr, false)
		if len(fake.calls) != 0 {
			t.Errorf("%s: requests sent despite the error: %v", tt.args, fake.calls)
		}
	}
	// Values are sent as typed; the controller converts them.
	fake := &fakeDeployAPI{}
	if _, err := deployWith(t, fake, "", "./wordpress --config posts=10 --config public=true"); err != nil {
		t.Fatal(err)
	}
	if cfg := fake.req.GetConfig(); cfg["posts"] != "10" || cfg["public"] != "true" {
		t.Errorf("config = %v", cfg)
	}
	// A charm without config.yaml has no options.
	_ = os.Remove(filepath.Join(path, "config.yaml"))
	_, err := deployWith(t, &fakeDeployAPI{}, "", "./wordpress --config title=x")
	checkErr(t, err, `invalid --config for "wordpress": unknown option "title"`, false)
}
