package daemon

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// Files of a member's data directory besides bootstrap's (controller/bootstrap).
const (
	// MemberFile records which controller and member this data directory belongs to.
	MemberFile = "member.json"
	// JoinFile is what a new member needs to join its controller; the member that starts it
	// (enable-ha) writes it, and the new member removes it once it has joined.
	JoinFile = "join.json"
	// StoreKeyFile holds the key that seals the controller's secrets in the store (the CA's key):
	// every member has its own copy, given to it when it joins.
	StoreKeyFile = "store.key"
)

// memberIdentity is member.json.
type memberIdentity struct {
	ControllerUUID string `json:"controller_uuid"`
	ID             string `json:"id"`
	// CloudDir is where the local provider keeps the machines of every member on this host (the
	// bootstrap member's data directory): the instances and the agent host.
	CloudDir string `json:"cloud_dir"`
	// EtcdEndpoints, when set, is the external cluster the member uses (jujud --etcd-endpoints),
	// with its TLS files copied into the data directory.
	EtcdEndpoints []string `json:"etcd_endpoints,omitempty"`
	EtcdInsecure  bool     `json:"etcd_insecure,omitempty"`
	// Removed marks a member taken out of its controller whose directory stays (the bootstrap
	// member's, which holds the local provider's machines): it must never serve again, or it
	// would start a store of its own.
	Removed bool `json:"removed,omitempty"`
}

// joinRequest is join.json: a member-to-be's instructions.
type joinRequest struct {
	ControllerUUID string `json:"controller_uuid"`
	ControllerName string `json:"controller_name"`
	ID             string `json:"id"`
	CloudDir       string `json:"cloud_dir"`
	// Peers are the client URLs of the store's members, to join the etcd cluster through.
	Peers []string `json:"peers,omitempty"`
	// EtcdEndpoints (external cluster) instead of Peers: the member embeds no etcd.
	EtcdEndpoints []string `json:"etcd_endpoints,omitempty"`
	EtcdInsecure  bool     `json:"etcd_insecure,omitempty"`
	StoreKey      string   `json:"store_key"`
}

func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decoding %s: %w", path, err)
	}
	return true, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// storeKey reads the member's sealing key, creating one when create says so (the bootstrap
// member's first start, or an older data directory from before members).
func storeKey(dir string, create bool) ([]byte, error) {
	path := filepath.Join(dir, StoreKeyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the store key: %w", err)
	}
	return decodeKey(strings.TrimSpace(string(data)))
}

func decodeKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != 32 {
		return nil, errors.New("store key: want 64 hex digits")
	}
	return key, nil
}

// seal encrypts a secret for the store with AES-256-GCM: nonce, then ciphertext.
func seal(key, plain []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plain, nil), nil
}

// unseal reverses seal; a wrong key fails (GCM authenticates).
func unseal(key, sealed []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("sealed secret too short")
	}
	plain, err := gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], nil)
	if err != nil {
		return nil, errors.New("the store key of this member does not open the controller's secrets (a member of another controller?)")
	}
	return plain, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Files of an external cluster's TLS material, copied into a member's data directory.
const (
	etcdCAFile   = "etcd-ca.crt"
	etcdCertFile = "etcd-client.crt"
	etcdKeyFile  = "etcd-client.key"
)

// member is this jujud's place in its controller: who it is, where its store is, where the
// machines of the local provider live.
type member struct {
	dataDir string
	// id is "" until register (the bootstrap member's first start).
	id    string
	ident *memberIdentity // member.json; nil before the first registration
	join  *joinRequest    // join.json; nil unless joining now
	// cloudDir holds the local provider's instances and agent host, shared by every member on
	// this host: the bootstrap member's data directory.
	cloudDir string
	key      []byte
	// capacity: whether this member's processes could take more agents (the API asks).
	capacity capacity
}

// readMember reads member.json and join.json of the data directory.
func readMember(cfg Config) (*member, error) {
	m := &member{dataDir: cfg.DataDir, cloudDir: cfg.DataDir}
	ident := &memberIdentity{}
	if ok, err := readJSON(filepath.Join(cfg.DataDir, MemberFile), ident); err != nil {
		return nil, err
	} else if ok {
		if ident.Removed {
			return nil, fmt.Errorf("%s was member %s of controller %s and was removed from it: it cannot serve again (juju enable-ha adds new members)", cfg.DataDir, ident.ID, ident.ControllerUUID)
		}
		m.ident, m.id = ident, ident.ID
		if ident.CloudDir != "" {
			m.cloudDir = ident.CloudDir
		}
		return m, nil
	}
	join := &joinRequest{}
	if ok, err := readJSON(filepath.Join(cfg.DataDir, JoinFile), join); err != nil {
		return nil, err
	} else if ok {
		if join.ID == "" || join.ControllerUUID == "" || (len(join.Peers) == 0 && len(join.EtcdEndpoints) == 0) {
			return nil, fmt.Errorf("%s: incomplete (needs id, controller_uuid and peers or etcd_endpoints)", filepath.Join(cfg.DataDir, JoinFile))
		}
		m.join, m.id = join, join.ID
		if join.CloudDir != "" {
			m.cloudDir = join.CloudDir
		}
	}
	return m, nil
}

func (m *member) joining() bool { return m.join != nil }

func (m *member) controllerUUID() string {
	switch {
	case m.join != nil:
		return m.join.ControllerUUID
	case m.ident != nil:
		return m.ident.ControllerUUID
	}
	return ""
}

// etcdName is the member's name in the etcd cluster: the bootstrap member kept the name it
// had before there were members.
func (m *member) etcdName() string {
	if m.id == "" || m.id == "0" {
		return "jujud"
	}
	return "member-" + m.id
}

// checkController refuses a store that holds another controller than this member's, and a
// store that holds a controller this data directory never belonged to.
func (m *member) checkController(uuid string, cfg Config) error {
	if want := m.controllerUUID(); want != "" {
		if want != uuid {
			return fmt.Errorf("the store holds controller %s, but this member (%s) belongs to controller %s: refusing to serve another controller's store", uuid, cfg.DataDir, want)
		}
		return nil
	}
	// A data directory from before members: the bootstrap member, if its bootstrap.json says so.
	if info, err := bootstrap.ReadInfo(cfg.DataDir); err == nil && info.ControllerUUID == uuid {
		return nil
	}
	return fmt.Errorf("the store already holds controller %s, and %s is not one of its members: new members join through juju enable-ha", uuid, cfg.DataDir)
}

// externalEndpoints are the external cluster's endpoints and TLS files: from the flags, else
// from member.json or join.json (TLS files copied into the data directory).
func (m *member) external(cfg Config) ([]string, store.ConnectOptions) {
	if len(cfg.EtcdEndpoints) > 0 {
		return cfg.EtcdEndpoints, store.ConnectOptions{
			TLS: store.TLSFiles{CA: cfg.EtcdCA, Cert: cfg.EtcdCert, Key: cfg.EtcdKey}, Insecure: cfg.EtcdInsecure,
		}
	}
	var eps []string
	var insecure bool
	switch {
	case m.ident != nil:
		eps, insecure = m.ident.EtcdEndpoints, m.ident.EtcdInsecure
	case m.join != nil:
		eps, insecure = m.join.EtcdEndpoints, m.join.EtcdInsecure
	}
	opts := store.ConnectOptions{Insecure: insecure}
	if len(eps) > 0 {
		file := func(name string) string {
			p := filepath.Join(m.dataDir, name)
			if _, err := os.Stat(p); err != nil {
				return ""
			}
			return p
		}
		opts.TLS = store.TLSFiles{CA: file(etcdCAFile), Cert: file(etcdCertFile), Key: file(etcdKeyFile)}
	}
	return eps, opts
}

// openStore connects to the external cluster, joins the embedded one (a new member), or
// starts this member's embedded etcd.
func (m *member) openStore(ctx context.Context, cfg Config) (*store.Store, error) {
	if eps, opts := m.external(cfg); len(eps) > 0 {
		return store.Connect(ctx, eps, opts)
	}
	etcdDir := filepath.Join(cfg.DataDir, "etcd")
	opts := store.EmbeddedOptions{NoFsync: cfg.NoFsync, CADir: cfg.DataDir, Name: m.etcdName()}
	if m.joining() {
		st, err := store.JoinEmbedded(ctx, etcdDir, opts, store.JoinOptions{Endpoints: m.join.Peers})
		if err != nil {
			return nil, fmt.Errorf("joining the controller's store: %w", err)
		}
		return st, nil
	}
	return store.StartEmbedded(ctx, etcdDir, opts)
}

// register gives the member its id and member.json, and keeps the controller's CA sealed in
// the store, so that any member can start the next one.
func (m *member) register(ctx context.Context, s *state.State, cfg Config, controllerUUID string) error {
	var err error
	if m.joining() {
		if m.key, err = decodeKey(m.join.StoreKey); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(m.dataDir, StoreKeyFile), []byte(m.join.StoreKey+"\n"), 0o600); err != nil {
			return err
		}
	} else if m.key, err = storeKey(m.dataDir, true); err != nil {
		return err
	}
	if err := m.sealCA(ctx, s); err != nil {
		return err
	}
	if m.ident != nil {
		return nil
	}
	if m.id == "" {
		if m.id, err = s.NextMemberID(ctx); err != nil {
			return err
		}
	}
	ident := &memberIdentity{ControllerUUID: controllerUUID, ID: m.id, CloudDir: m.cloudDir}
	if eps, opts := m.external(cfg); len(eps) > 0 {
		ident.EtcdEndpoints, ident.EtcdInsecure = eps, opts.Insecure
		if err := copyEtcdTLS(m.dataDir, opts.TLS); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(m.dataDir, MemberFile), ident); err != nil {
		return err
	}
	m.ident = ident
	if m.joining() {
		m.join = nil
		return os.Remove(filepath.Join(m.dataDir, JoinFile))
	}
	return nil
}

// copyEtcdTLS keeps the external cluster's TLS files in the data directory, so that a restart
// needs no flags and the member depends on no other's files.
func copyEtcdTLS(dir string, files store.TLSFiles) error {
	for src, name := range map[string]string{files.CA: etcdCAFile, files.Cert: etcdCertFile, files.Key: etcdKeyFile} {
		if src == "" || src == filepath.Join(dir, name) {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("copying the store's TLS files: %w", err)
		}
		if err := atomicfile.Write(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// sealCA stores the controller's CA with its key sealed, unless stored already; a stored CA
// must be this member's, and the member's key must open it.
func (m *member) sealCA(ctx context.Context, s *state.State) error {
	certPEM, err := os.ReadFile(filepath.Join(m.dataDir, bootstrap.CACertFile))
	if err != nil {
		return fmt.Errorf("reading the CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(m.dataDir, bootstrap.CAKeyFile))
	if err != nil {
		return fmt.Errorf("reading the CA key: %w", err)
	}
	sealed, err := seal(m.key, keyPEM)
	if err != nil {
		return err
	}
	stored, err := s.PutControllerCA(ctx, &storepb.ControllerCA{CertPem: string(certPEM), SealedKey: sealed})
	if err != nil {
		return err
	}
	if stored.GetCertPem() != string(certPEM) {
		return errors.New("this member's CA is not the controller's (a member of another controller?)")
	}
	if _, err := unseal(m.key, stored.GetSealedKey()); err != nil {
		return err
	}
	return nil
}

// caKey unseals the controller's CA key from the store (to issue a new member's certificates).
func (m *member) caKey(ctx context.Context, s *state.State) (certPEM, keyPEM []byte, err error) {
	ca, err := s.ControllerCA(ctx)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = unseal(m.key, ca.GetSealedKey())
	if err != nil {
		return nil, nil, err
	}
	return []byte(ca.GetCertPem()), keyPEM, nil
}
