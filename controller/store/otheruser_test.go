package store

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// attackEnv, when set, makes the test binary the other user's attempts (see attack) instead
// of running the tests: endpoint|file,file,...|control-cert|control-key|control-ca.
const attackEnv = "JUJU_STORE_TEST_ATTACK"

func TestMain(m *testing.M) {
	if spec := os.Getenv(attackEnv); spec != "" {
		os.Exit(attack(spec, os.Stdout))
	}
	os.Exit(m.Run())
}

// Another local user can neither read nor write a key of the embedded store, nor read its
// certificates: the test runs its own binary as nobody against a running store.
func TestOtherLocalUserCannotReachTheStore(t *testing.T) {
	if os.Geteuid() != 0 {
		reason := "cannot test as another local user: needs root to run a process as nobody"
		if os.Getenv("CI") == "true" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	uid, gid := nobody(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Every directory above the store is open to all, so that only the store's own modes
	// stand in the way (t.TempDir makes 0700 directories).
	dir := openDir(t)
	s, err := StartEmbedded(ctx, filepath.Join(dir, "etcd"), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Client.Put(ctx, "/juju/secret", "admin-hash"); err != nil {
		t.Fatal(err)
	}
	files := s.ClientTLS()

	// A copy of the controller's client certificate that nobody may read: the same attempts
	// with it must succeed, so that the refusals above prove the store, not a broken client.
	control := openDir(t)
	for _, f := range []string{files.Cert, files.Key, files.CA} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(control, filepath.Base(f))
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dst, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	exe := copyExecutable(t)
	spec := strings.Join([]string{
		s.Endpoint(),
		strings.Join([]string{files.Cert, files.Key, files.CA, filepath.Join(dir, "etcd", "member", "snap", "db")}, ","),
		filepath.Join(control, filepath.Base(files.Cert)),
		filepath.Join(control, filepath.Base(files.Key)),
		filepath.Join(control, filepath.Base(files.CA)),
	}, "|")
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{attackEnv + "=" + spec}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", uid, out)
	if err != nil {
		t.Fatalf("the other user got through (or the attempts failed to run): %v", err)
	}
	resp, err := s.Client.Get(ctx, "/juju/secret")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "admin-hash" {
		t.Fatalf("the key changed: %v %v", resp, err)
	}
}

// attack runs as the other user. It exits 0 only when every attempt without the controller's
// certificate failed and the control attempt with it succeeded.
func attack(spec string, w io.Writer) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 5 {
		fmt.Fprintf(w, "bad spec %q\n", spec)
		return 2
	}
	endpoint, files := parts[0], strings.Split(parts[1], ",")
	fmt.Fprintf(w, "uid %d\n", os.Getuid())
	failed := false
	for _, f := range files {
		_, err := os.ReadFile(f)
		switch {
		case err == nil:
			fmt.Fprintf(w, "FAIL read %s\n", f)
			failed = true
		case !os.IsPermission(err):
			fmt.Fprintf(w, "FAIL read %s: not a permission error: %v\n", f, err)
			failed = true
		default:
			fmt.Fprintf(w, "ok   read refused: %v\n", err)
		}
	}
	own, err := ownClientCert()
	if err != nil {
		fmt.Fprintf(w, "FAIL %v\n", err)
		return 1
	}
	plain := "http://" + strings.TrimPrefix(endpoint, "https://")
	noVerify := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}                                      //nolint:gosec // an attacker does not check the server
	ownCert := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{own}} //nolint:gosec
	control, err := clientTLS(TLSFiles{Cert: parts[2], Key: parts[3], CA: parts[4]})
	if err != nil {
		fmt.Fprintf(w, "FAIL control: %v\n", err)
		return 1
	}
	tries := []struct {
		what     string
		endpoint string
		tls      *tls.Config
		succeed  bool
	}{
		{"plain http", plain, nil, false},
		{"TLS without a client certificate", endpoint, noVerify, false},
		{"TLS with a certificate of another CA", endpoint, ownCert, false},
		{"control: TLS with the controller's client certificate", endpoint, control, true},
	}
	results := make([]error, len(tries))
	var wg sync.WaitGroup
	for i, tr := range tries {
		wg.Go(func() { results[i] = readWrite(tr.endpoint, tr.tls) })
	}
	wg.Wait()
	for i, tr := range tries {
		err := results[i]
		if (err == nil) != tr.succeed {
			fmt.Fprintf(w, "FAIL %s: %v\n", tr.what, err)
			failed = true
			continue
		}
		fmt.Fprintf(w, "ok   %s: %v\n", tr.what, err)
	}
	if failed {
		return 1
	}
	return 0
}

// readWrite reads the secret and, if that worked, replaces it; the control attempt writes the
// same value back.
func readWrite(endpoint string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: cfg, DialTimeout: time.Second, Context: ctx, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/juju/secret")
	if err != nil {
		return err
	}
	value := "attacker-hash"
	if len(resp.Kvs) == 1 && cfg != nil && len(cfg.Certificates) == 1 && cfg.RootCAs != nil {
		value = string(resp.Kvs[0].Value) // the control: keep the admin's value
	}
	_, err = cli.Put(ctx, "/juju/secret", value)
	return err
}

// ownClientCert is a client certificate of a CA the attacker made.
func ownClientCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "juju-controller-etcd-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// nobody is the uid and gid of the user nobody.
func nobody(t *testing.T) (int, int) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return 65534, 65534
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		t.Fatalf("user nobody: uid %q gid %q", u.Uid, u.Gid)
	}
	return uid, gid
}

// openDir is a new temporary directory that every user may enter, as its parent.
func openDir(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// copyExecutable copies the test binary where nobody may run it (go test builds it in a 0700
// directory).
func copyExecutable(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(openDir(t), "store.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}
