package bootstrap

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
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

func TestAPIListenAddr(t *testing.T) {
	tests := []struct {
		requested, recorded string
		want                string
		kept                bool
	}{
		{"127.0.0.1:0", "", "127.0.0.1:0", false},                        // first start: any port
		{"127.0.0.1:0", "127.0.0.1:40123", "127.0.0.1:40123", true},      // restart keeps the port
		{"0.0.0.0:0", "[::]:40123", "0.0.0.0:40123", true},               // on the requested host
		{"127.0.0.1:17070", "127.0.0.1:40123", "127.0.0.1:17070", false}, // an explicit port moves it
		{"127.0.0.1:17070", "", "127.0.0.1:17070", false},                // first start, explicit
		{"127.0.0.1:0", "garbage", "127.0.0.1:0", false},                 // unreadable record
		{"127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", false},             // nothing was bound
		{"not an address", "127.0.0.1:40123", "not an address", false},   // Listen says why
		{"[::1]:0", "[::1]:40123", "[::1]:40123", true},                  // IPv6
		{"localhost:0", "127.0.0.1:40123", "localhost:40123", true},      // names stay names
		{":0", "[::]:40123", ":40123", true},                             // every interface
		{"127.0.0.1:0", "127.0.0.1:", "127.0.0.1:0", false},              // no port recorded
		{"127.0.0.1:0", "127.0.0.1:40123\n", "127.0.0.1:0", false},       // corrupt record
		{"127.0.0.1:00", "127.0.0.1:40123", "127.0.0.1:00", false},       // explicit, odd spelling
	}
	for _, tt := range tests {
		got, kept := APIListenAddr(tt.requested, tt.recorded)
		if got != tt.want || kept != tt.kept {
			t.Errorf("APIListenAddr(%q, %q) = %q, %v; want %q, %v", tt.requested, tt.recorded, got, kept, tt.want, tt.kept)
		}
	}
}

// The store's certificates come from the given CA, are kept while they verify against it, and
// are issued again under another CA.
func TestEtcdCertsFollowTheirCA(t *testing.T) {
	caA, caB, dir := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "tls")
	first, err := EnsureEtcdCerts(caA, dir)
	if err != nil {
		t.Fatal(err)
	}
	firstPEM, _ := os.ReadFile(first.ClientCert)
	again, err := EnsureEtcdCerts(caA, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again.ClientCert); string(b) != string(firstPEM) {
		t.Error("reissued under the same CA")
	}
	other, err := EnsureEtcdCerts(caB, dir)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(caB, CACertFile))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	for file, usage := range map[string]x509.ExtKeyUsage{other.ServerCert: x509.ExtKeyUsageServerAuth, other.ClientCert: x509.ExtKeyUsageClientAuth} {
		pair, err := tls.LoadX509KeyPair(file, strings.TrimSuffix(file, ".crt")+".key")
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(pair.Certificate[0])
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("%s under the new CA: %v", file, err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v", dir, fi, err)
	}
}
