package provisioner_test

import (
	"context"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
)

// L-M5: a provisioning error is not retried on its own; once resolved (here with constraints
// the provider can meet) the provisioner, watching the error go, starts the instance.
func TestRetryProvisioningStartsInstance_LM5(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "mem=9000G")
	inst := local.InstanceID(uuid, id)
	workertest.Eventually(t, "provisioning error", func() bool {
		return workertest.Machine(workertest.Snapshot(t, st, uuid), id).ProvisioningError != ""
	})
	time.Sleep(100 * time.Millisecond)
	if n := p.count(&p.started, inst); n != 1 {
		t.Fatalf("retried by itself: %d starts", n)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "", true); err != nil {
		t.Fatal(err)
	}
	provisioned(t, p, uuid, id)
	if n := p.count(&p.started, inst); n != 2 {
		t.Fatalf("%d starts", n)
	}
}
