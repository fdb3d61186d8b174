// Package bootstrap prepares a controller's data directory on first start: the CA and server
// certificate, the admin credential, and the bootstrap.json hand-off that `juju bootstrap` reads.
package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// ServerName is the name the server certificate is issued for and clients verify.
const ServerName = "juju-controller"

// Files in the data directory.
const (
	CACertFile     = "ca.crt"
	CAKeyFile      = "ca.key"
	ServerCertFile = "server.crt"
	ServerKeyFile  = "server.key"
	InfoFile       = "bootstrap.json"
	PIDFile        = "jujud.pid"
)

// EnsureCerts creates the CA and server certificate in dir unless they exist, and returns the
// server's TLS certificate and the CA certificate (PEM).
func EnsureCerts(dir string) (tls.Certificate, []byte, error) {
	caPath := filepath.Join(dir, CACertFile)
	if _, err := os.Stat(caPath); os.IsNotExist(err) {
		if err := writeCerts(dir); err != nil {
			return tls.Certificate{}, nil, err
		}
	} else if _, err := os.Stat(filepath.Join(dir, ServerCertFile)); os.IsNotExist(err) {
		// A new controller member: the CA came from the member that started it.
		caCert, caKey, err := loadOrCreateCA(dir)
		if err != nil {
			return tls.Certificate{}, nil, err
		}
		if err := issueServerCert(dir, caCert, caKey); err != nil {
			return tls.Certificate{}, nil, err
		}
	}
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("reading CA certificate: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, ServerCertFile), filepath.Join(dir, ServerKeyFile))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("loading server certificate: %w", err)
	}
	return cert, caPEM, nil
}

func writeCerts(dir string) error {
	caCert, caKey, err := writeCA(dir)
	if err != nil {
		return err
	}
	return issueServerCert(dir, caCert, caKey)
}

// issueServerCert issues the API server's certificate with the CA.
func issueServerCert(dir string, caCert *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	return issue(dir, ServerCertFile, ServerKeyFile, caCert, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: ServerName, Organization: []string{"juju"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{ServerName, "localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}, 0o644)
}

// writeCA creates a CA (ca.crt, ca.key) in dir.
func writeCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "juju controller CA", Organization: []string{"juju"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	// The key first: a ca.crt without its key would stop the next start from issuing.
	if err := writePEM(dir, CAKeyFile, keyBlock(caKey), 0o600); err != nil {
		return nil, nil, err
	}
	if err := writePEM(dir, CACertFile, &pem.Block{Type: "CERTIFICATE", Bytes: caDER}, 0o644); err != nil {
		return nil, nil, err
	}
	return caCert, caKey, nil
}

// issue signs a new key's certificate from tmpl (its names and extended key usages) with the
// CA and writes it to dir as certFile (certMode) and keyFile (0600).
func issue(dir, certFile, keyFile string, caCert *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, certMode os.FileMode) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating key for %s: %w", certFile, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating %s: %w", certFile, err)
	}
	if err := writePEM(dir, keyFile, keyBlock(key), 0o600); err != nil {
		return err
	}
	return writePEM(dir, certFile, &pem.Block{Type: "CERTIFICATE", Bytes: der}, certMode)
}

func writePEM(dir, name string, block *pem.Block, mode os.FileMode) error {
	if block == nil {
		return fmt.Errorf("encoding %s", name)
	}
	return atomicfile.Write(filepath.Join(dir, name), pem.EncodeToMemory(block), mode)
}

func keyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
