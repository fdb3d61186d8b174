package agent

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUnpackCharm(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charm")
	if err := unpackCharm(zipOf(t, map[string]string{"metadata.yaml": "name: x\n", "hooks/install": "#!/bin/sh\n"}), dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hooks", "install")); err != nil || string(b) != "#!/bin/sh\n" {
		t.Fatalf("hook: %q %v", b, err)
	}
}

func TestUnpackCharmRefusesEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charm")
	if err := unpackCharm(zipOf(t, map[string]string{"../evil": "x"}), dir); err == nil {
		t.Fatal("an entry outside the charm directory was written")
	}
}

func TestConfRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "machine-0")
	in := Conf{Tag: "machine-0", Password: "pw", Model: "m", APIAddr: "127.0.0.1:1", CACert: "pem", ID: "0"}
	if err := WriteConf(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadConf(dir)
	if err != nil || out != in {
		t.Fatalf("got %+v %v", out, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, ConfFile))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if unitDirName("my-app/12") != "unit-my-app-12" {
		t.Fatal(unitDirName("my-app/12"))
	}
}

// Agents read from their agent.conf one copy of what they all share (the CA certificate, the
// controller's address, the model), not one each (issue 16).
func TestConfsShareTheirCommonStrings(t *testing.T) {
	var confs []Conf
	for _, id := range []string{"0", "1"} {
		dir := filepath.Join(t.TempDir(), "machine-"+id)
		in := Conf{Tag: "machine-" + id, Password: "pw" + id, Model: "m", APIAddr: "127.0.0.1:1", CACert: "-----BEGIN CERTIFICATE-----", ID: id}
		if err := WriteConf(dir, in); err != nil {
			t.Fatal(err)
		}
		out, err := ReadConf(dir)
		if err != nil || out != in {
			t.Fatalf("got %+v %v", out, err)
		}
		confs = append(confs, out)
	}
	a, b := confs[0], confs[1]
	for what, pair := range map[string][2]string{"CA certificate": {a.CACert, b.CACert}, "address": {a.APIAddr, b.APIAddr}, "model": {a.Model, b.Model}} {
		if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Errorf("the two agents' %s are two copies", what)
		}
	}
}
