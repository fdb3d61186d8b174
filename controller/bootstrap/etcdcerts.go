package bootstrap

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Files of the store's TLS material, in their own directory (0700).
const (
	EtcdServerCertFile = "etcd-server.crt"
	EtcdServerKeyFile  = "etcd-server.key"
	EtcdClientCertFile = "etcd-client.crt"
	EtcdClientKeyFile  = "etcd-client.key"
)

// EtcdClientName is the common name of the controller's client certificate for etcd.
const EtcdClientName = "juju-controller-etcd-client"

// EtcdCerts are the paths of the embedded etcd's mutual-TLS material.
type EtcdCerts struct {
	// CA is the controller's CA certificate: etcd trusts clients and peers it signed, and the
	// controller trusts the etcd server it signed.
	CA string
	// ServerCert and ServerKey serve etcd's client and peer URLs (loopback only).
	ServerCert, ServerKey string
	// ClientCert and ClientKey are the controller's identity towards etcd.
	ClientCert, ClientKey string
}

// EnsureEtcdCerts returns the etcd server and client certificates in dir, issuing them with the
// CA of caDir (ca.crt, ca.key; a new CA there if it has none) on first start, or when they no
// longer verify against that CA. Every file in dir is 0600 and dir is 0700: only the
// controller's user may read them, and without the client key nobody reaches the store.
func EnsureEtcdCerts(caDir, dir string) (EtcdCerts, error) {
	certs := EtcdCerts{
		CA:         filepath.Join(caDir, CACertFile),
		ServerCert: filepath.Join(dir, EtcdServerCertFile), ServerKey: filepath.Join(dir, EtcdServerKeyFile),
		ClientCert: filepath.Join(dir, EtcdClientCertFile), ClientKey: filepath.Join(dir, EtcdClientKeyFile),
	}
	for _, d := range []string{caDir, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return certs, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return certs, fmt.Errorf("securing %s: %w", dir, err)
	}
	caCert, caKey, err := loadOrCreateCA(caDir)
	if err != nil {
		return certs, err
	}
	if verifies(certs.ServerCert, certs.ServerKey, caCert, x509.ExtKeyUsageServerAuth) &&
		verifies(certs.ClientCert, certs.ClientKey, caCert, x509.ExtKeyUsageClientAuth) {
		return certs, nil
	}
	// The server's certificate also authenticates it as a peer, which is both ends of a TLS
	// connection: a member dials the others with it.
	if err := issue(dir, EtcdServerCertFile, EtcdServerKeyFile, caCert, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "juju-controller-etcd", Organization: []string{"juju"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}, 0o600); err != nil {
		return certs, err
	}
	if err := issue(dir, EtcdClientCertFile, EtcdClientKeyFile, caCert, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: EtcdClientName, Organization: []string{"juju"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, 0o600); err != nil {
		return certs, err
	}
	return certs, nil
}

// loadOrCreateCA reads the CA of dir, creating it if dir has none.
func loadOrCreateCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if os.IsNotExist(err) {
		return writeCA(dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading CA certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, mustRead(filepath.Join(dir, CAKeyFile)))
	if err != nil {
		return nil, nil, fmt.Errorf("loading CA of %s: %w", dir, err)
	}
	caCert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("CA key of %s is not ECDSA", dir)
	}
	return caCert, key, nil
}

// mustRead returns the file's contents, or nothing: the key pair check then names the problem.
func mustRead(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// verifies reports whether certFile and keyFile are a pair signed by ca for usage.
func verifies(certFile, keyFile string, ca *x509.Certificate, usage x509.ExtKeyUsage) bool {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err == nil
}
