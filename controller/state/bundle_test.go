package state_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// modRevision is the store revision that last wrote a document of the model.
func modRevision(t *testing.T, uuid, rest string) int64 {
	t.Helper()
	resp, err := st.Client().Get(context.Background(), state.ModelPrefix(uuid)+rest)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s: %v %v", rest, resp, err)
	}
	return resp.Kvs[0].ModRevision
}

// Annotations of an application and of a machine: set, changed and removed ("" value) in one
// transaction each, kept in the entity's document (a snapshot reads them with the rest); a
// change that changes nothing writes nothing.
func TestSetAnnotations(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	machine, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	app := state.AnnotationTarget{Application: "wordpress"}
	if err := st.SetAnnotations(ctx, uuid, app, map[string]string{"gui-x": "10", "gui-y": "20", "owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetAnnotations(ctx, uuid, app, map[string]string{"gui-x": "", "owner": "web", "absent": ""}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Machine: machine}, map[string]string{"rack": "r1"}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snap.Applications[0].Annotations, map[string]string{"gui-y": "20", "owner": "web"}; !maps.Equal(got, want) {
		t.Errorf("application annotations %v, want %v", got, want)
	}
	if got, want := snap.Machines[0].Annotations, map[string]string{"rack": "r1"}; !maps.Equal(got, want) {
		t.Errorf("machine annotations %v, want %v", got, want)
	}

	before := modRevision(t, uuid, "applications/wordpress")
	if err := st.SetAnnotations(ctx, uuid, app, map[string]string{"owner": "web", "gui-x": ""}); err != nil {
		t.Fatal(err)
	}
	if after := modRevision(t, uuid, "applications/wordpress"); after != before {
		t.Errorf("an unchanged annotation rewrote the application (revision %d -> %d)", before, after)
	}

	// Removing every key leaves no map behind.
	if err := st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Machine: machine}, map[string]string{"rack": ""}); err != nil {
		t.Fatal(err)
	}
	m, err := st.Machine(ctx, uuid, machine)
	if err != nil || m.Annotations != nil {
		t.Errorf("machine annotations after removing all: %v %v", m.GetAnnotations(), err)
	}
	audit(t, uuid)
}

// Bad keys (Juju refuses "." in a key; an empty key is no key) are refused and nothing is
// written, not even the good keys beside them; unknown entities are NotFound.
func TestSetAnnotationsRefusals(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	before := modRevision(t, uuid, "applications/wordpress")
	for _, bad := range []map[string]string{
		{"good": "1", "a.b": "x"},
		{"good": "1", "": "x"},
	} {
		err := st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Application: "wordpress"}, bad)
		if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), `cannot update annotations on application "wordpress": invalid annotation key`) {
			t.Errorf("%v: got %v", bad, err)
		}
	}
	if after := modRevision(t, uuid, "applications/wordpress"); after != before {
		t.Errorf("a refused change wrote the application")
	}
	err := st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Application: "nope"}, map[string]string{"a": "b"})
	if !errors.Is(err, apierr.NotFound) || err.Error() != `application "nope" not found` {
		t.Errorf("unknown application: %v", err)
	}
	err = st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Machine: "42"}, map[string]string{"a": "b"})
	if !errors.Is(err, apierr.NotFound) || err.Error() != `machine "42" not found` {
		t.Errorf("unknown machine: %v", err)
	}
	err = st.SetAnnotations(ctx, uuid, state.AnnotationTarget{Application: "wordpress", Machine: "0"}, map[string]string{"a": "b"})
	if !errors.Is(err, apierr.NotValid) {
		t.Errorf("both targets: %v", err)
	}
}
