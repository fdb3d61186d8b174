package bootstrap

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestCertsVerifyAgainstTheirCA(t *testing.T) {
	dir := t.TempDir()
	cert, caPEM, err := EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("bad CA PEM")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: ServerName}); err != nil {
		t.Fatalf("server certificate does not verify: %v", err)
	}
	// A second call keeps the same CA: clients that pinned it still connect after a restart.
	_, again, err := EnsureCerts(dir)
	if err != nil || string(again) != string(caPEM) {
		t.Fatalf("CA changed on restart: %v", err)
	}
	for _, f := range []string{CAKeyFile, ServerKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi.Mode(), err)
		}
	}
}

func TestInfoRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := Info{ControllerUUID: "u", APIAddr: "127.0.0.1:1", CACert: "pem", AdminTag: "user-admin", AdminPassword: "pw", PID: 7,
		Models: []ModelInfo{{Name: "default", UUID: "m"}}}
	if err := WriteInfo(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadInfo(dir)
	if err != nil || out.APIAddr != in.APIAddr || out.Models[0].UUID != "m" || out.AdminPassword != "pw" {
		t.Fatalf("got %+v %v", out, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, InfoFile))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
