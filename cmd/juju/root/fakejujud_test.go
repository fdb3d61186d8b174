package root

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// runFakeJujud is a stand-in controller for the end-to-end test: the test binary runs it when
// invoked as "jujud". It serves just enough of the API over TLS, with the admin credential
// checked on every call, writes bootstrap.json like jujud and exits on SIGTERM.
func runFakeJujud() int {
	fs := flag.NewFlagSet("jujud", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "")
	name := fs.String("controller-name", "", "")
	addr := fs.String("api-addr", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	caPEM, cert, err := fakeCertificates()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fake := &fakeController{
		name:     *name,
		password: "sekrit",
		models: map[string]*jujupb.Model{
			"controller": {Name: "controller", Uuid: "uuid-controller", Owner: "admin", Cloud: "localhost", Region: "localhost", Type: "iaas"},
			"default":    {Name: "default", Uuid: "uuid-default", Owner: "admin", Cloud: "localhost", Region: "localhost", Type: "iaas"},
		},
		apps: map[string][]*jujupb.ApplicationStatus{},
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})),
		grpc.UnaryInterceptor(fake.authenticate))
	jujupb.RegisterControllerServiceServer(srv, fake)
	jujupb.RegisterApplicationServiceServer(srv, fake)
	jujupb.RegisterStatusServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()

	info, _ := json.Marshal(map[string]any{
		"controller_uuid": "uuid-ctrl",
		"api_addr":        lis.Addr().String(),
		"ca_cert":         string(caPEM),
		"admin_tag":       "user-admin",
		"admin_password":  fake.password,
		"pid":             os.Getpid(),
		"models": []map[string]string{
			{"name": "controller", "uuid": "uuid-controller"},
			{"name": "default", "uuid": "uuid-default"},
		},
	})
	tmp := filepath.Join(*dataDir, "bootstrap.json.tmp")
	if err := os.WriteFile(tmp, info, 0o600); err != nil {
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(*dataDir, "bootstrap.json")); err != nil {
		return 1
	}
	fmt.Println("fake jujud serving on", lis.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	srv.Stop()
	return 0
}

// fakeCertificates makes a CA and a certificate for "juju-controller" signed by it.
func fakeCertificates() ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake juju CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "juju-controller"}, DNSNames: []string{"juju-controller"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

type fakeController struct {
	jujupb.UnimplementedControllerServiceServer
	jujupb.UnimplementedApplicationServiceServer
	jujupb.UnimplementedStatusServiceServer

	name     string
	password string

	mu       sync.Mutex
	models   map[string]*jujupb.Model
	apps     map[string][]*jujupb.ApplicationStatus // by model UUID
	revision int32
}

func (f *fakeController) authenticate(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	tag, pw := md.Get("x-juju-tag"), md.Get("x-juju-password")
	if len(tag) != 1 || tag[0] != "user-admin" || len(pw) != 1 || pw[0] != f.password {
		return nil, apierr.ToStatus(apierr.Unauthenticated)
	}
	return h(ctx, req)
}

func (f *fakeController) model(ref string) (*jujupb.Model, error) {
	for _, m := range f.models {
		if m.GetName() == ref || m.GetUuid() == ref {
			return m, nil
		}
	}
	return nil, apierr.ToStatus(apierr.Errorf(apierr.NotFound, "model %q not found", ref))
}

func (f *fakeController) Version(context.Context, *jujupb.VersionRequest) (*jujupb.VersionResponse, error) {
	return &jujupb.VersionResponse{Version: "0.1.0", ControllerUuid: "uuid-ctrl", Time: time.Now().UnixNano()}, nil
}

func (f *fakeController) ListModels(context.Context, *jujupb.ListModelsRequest) (*jujupb.ListModelsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &jujupb.ListModelsResponse{}
	for _, m := range f.models {
		resp.Models = append(resp.Models, m)
	}
	return resp, nil
}

func (f *fakeController) GetModel(_ context.Context, req *jujupb.ModelRef) (*jujupb.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.model(req.GetModel())
}

func (f *fakeController) AddModel(_ context.Context, req *jujupb.AddModelRequest) (*jujupb.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.models[req.GetName()]; ok {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.AlreadyExists, "model %q already exists", req.GetName()))
	}
	m := &jujupb.Model{Name: req.GetName(), Uuid: "uuid-" + req.GetName(), Owner: "admin", Cloud: "localhost", Region: "localhost", Type: "iaas"}
	f.models[req.GetName()] = m
	return m, nil
}

func (f *fakeController) UploadCharm(_ context.Context, req *jujupb.UploadCharmRequest) (*jujupb.UploadCharmResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(req.GetArchive()) == 0 {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.NotValid, "empty charm archive"))
	}
	f.revision++
	return &jujupb.UploadCharmResponse{Url: fmt.Sprintf("local:charm-%d", f.revision), Revision: f.revision}, nil
}

func (f *fakeController) Deploy(_ context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.apps[req.GetModel()] {
		if a.GetName() == req.GetApplication() {
			return nil, apierr.ToStatus(apierr.Errorf(apierr.AlreadyExists, "cannot add application %q: application already exists", a.GetName()))
		}
	}
	app := &jujupb.ApplicationStatus{Name: req.GetApplication(), CharmName: req.GetApplication(), CharmUrl: req.GetCharmUrl(),
		CharmOrigin: "local", Base: req.GetBase(), Status: &jujupb.StatusInfo{Status: "waiting", Message: "waiting for machine"}}
	resp := &jujupb.DeployResponse{}
	for i := range req.GetNumUnits() {
		name := fmt.Sprintf("%s/%d", req.GetApplication(), i)
		app.Units = append(app.Units, &jujupb.UnitStatus{Name: name,
			AgentStatus:    &jujupb.StatusInfo{Status: "allocating"},
			WorkloadStatus: &jujupb.StatusInfo{Status: "waiting", Message: "waiting for machine"}})
		resp.Units = append(resp.Units, name)
	}
	f.apps[req.GetModel()] = append(f.apps[req.GetModel()], app)
	return resp, nil
}

func (f *fakeController) FullStatus(_ context.Context, req *jujupb.FullStatusRequest) (*jujupb.FullStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.model(req.GetModel())
	if err != nil {
		return nil, err
	}
	return &jujupb.FullStatusResponse{
		Model: &jujupb.ModelStatus{Name: m.GetName(), Uuid: m.GetUuid(), Controller: f.name, Cloud: "localhost",
			Region: "localhost", Version: "0.1.0", Type: "iaas", Status: &jujupb.StatusInfo{Status: "available"}},
		Applications:   f.apps[m.GetUuid()],
		ControllerTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	}, nil
}
