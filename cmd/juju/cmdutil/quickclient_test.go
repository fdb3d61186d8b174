package cmdutil

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/client"
)

func TestCompletionSourceStore(t *testing.T) {
	src := seededFactory(t).CompletionSource()
	if got, err := src.Controllers(); err != nil || !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("Controllers = %q, %v", got, err)
	}
	if got, err := src.StoreModels("two"); err != nil || !slices.Equal(got, []string{"default", "other"}) {
		t.Errorf("StoreModels = %q, %v", got, err)
	}
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	fs.StringP("model", "m", "", "")
	if err := fs.Parse([]string{"-m", "two:other"}); err != nil {
		t.Fatal(err)
	}
	if ctrl, model, err := src.Target(fs); err != nil || ctrl != "two" || model != "other" {
		t.Errorf("Target = %q %q %v", ctrl, model, err)
	}
}

func TestCompletionTimeout(t *testing.T) {
	for env, want := range map[string]time.Duration{"": 0, "1.5s": 1500 * time.Millisecond, "soon": 0} {
		t.Setenv("JUJU_COMPLETION_TIMEOUT", env)
		if got := seededFactory(t).CompletionSource().Timeout(); got != want {
			t.Errorf("JUJU_COMPLETION_TIMEOUT=%q: %v, want %v", env, got, want)
		}
	}
}

// QuickCall tries the next endpoint when one refuses, and gives up when ctx ends on one that
// never answers.
func TestQuickCall(t *testing.T) {
	f := seededFactory(t)
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	eps := []string{refused.Addr().String(), silent.Addr().String()}
	if err := f.Store.UpdateController("one", ControllerDetails{UUID: "one", APIEndpoints: eps, CACert: testCAPEM(t)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var tried []string
	err = f.QuickCall(ctx, "one", func(ctx context.Context, c *client.Client) error {
		tried = append(tried, c.Endpoint())
		_, _, err := c.CompleteNames(ctx, "default", client.NameUnit, "", 0)
		return err
	})
	if err == nil || !slices.Equal(tried, eps) {
		t.Errorf("QuickCall tried %q: %v", tried, err)
	}
	if err := f.QuickCall(ctx, "nope", func(context.Context, *client.Client) error { return nil }); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown controller: %v", err)
	}
}

func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
