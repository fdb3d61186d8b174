package status

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/output"
)

// syncBuffer is a buffer written by the command's goroutine and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// status --watch against a real controller (daemon.Run in this process: embedded etcd, TLS gRPC,
// the real Watch RPC): the empty model, then the model with an application deployed while
// watching, then Ctrl-C ends it with success.
func TestWatchRealController(t *testing.T) {
	ctx := context.Background()
	info := cmdtest.StartController(t).Info
	c, err := client.Dial(context.Background(), client.Config{
		Endpoint: info.APIAddr, CACert: []byte(info.CACert), Tag: info.AdminTag, Password: info.AdminPassword,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	model := &cmdutil.ModelRef{Controller: "local", Name: "default", Owner: "admin"}
	for _, m := range info.Models {
		if m.Name == "default" {
			model.UUID = m.UUID
		}
	}

	var out, errOut syncBuffer
	opts := &statusOptions{
		IO:           &output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Client:       func(context.Context) (statusAPI, error) { return cmdutil.WatchClient{Client: c}, nil },
		ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) { return model, nil },
		Now:          time.Now,
		Format:       output.Tabular,
		Watch:        10 * time.Millisecond,
	}
	watchCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	ran := make(chan error, 1)
	go func() { ran <- statusRun(watchCtx, opts) }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s; stdout %q, stderr %q", what, out.String(), errOut.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("empty-model note", func() bool { return strings.Contains(errOut.String(), `Model "default" is empty.`) })

	up, err := c.UploadCharm(ctx, "default", charmZip(t, map[string]string{
		"metadata.yaml": "name: blog\nsummary: blog\n",
		"manifest.yaml": "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &jujupb.DeployRequest{
		Model: "default", Application: "blog", CharmUrl: up.Url, Base: &jujupb.Base{Name: "ubuntu", Channel: "22.04"}, NumUnits: 0,
	}); err != nil {
		t.Fatal(err)
	}
	waitFor("redraw with the new application", func() bool { return strings.Contains(out.String(), "\nblog ") })

	interrupt()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("interrupted watch = %v, want success", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop on interrupt")
	}
	// First the empty model, then after a blank line the model with blog.
	renders := strings.Split(out.String(), "\n\nModel ")
	if len(renders) < 2 || strings.Contains(renders[0], "blog") || !strings.Contains(renders[len(renders)-1], "App ") {
		t.Errorf("stdout = %q", out.String())
	}
}

// charmZip archives files into a charm.
func charmZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, content); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
