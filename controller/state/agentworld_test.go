package state_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

func sameTasks(t *testing.T, what string, got, want []*storepb.Task) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tasks, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: task %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// A unit agent's one read of its world gives what its three reads (and the task queue's) gave.
func TestReadUnitWorldIsTheSeparateReads(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	enter(t, uuid, rel, "wordpress/0", "mysql/0")
	claim(t, uuid, "wordpress/0", true, "wordpress/0")
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"wordpress/0"}, Command: "hostname"})
	for _, members := range []func(string) bool{nil, func(ep string) bool { return ep == "db" }, func(string) bool { return false }} {
		w, err := st.ReadUnitWorld(ctx, uuid, "wordpress/0", members, true)
		if err != nil {
			t.Fatal(err)
		}
		u, err := st.Unit(ctx, uuid, "wordpress/0")
		if err != nil {
			t.Fatal(err)
		}
		app, err := st.ReadAgentApplication(ctx, uuid, "wordpress")
		if err != nil {
			t.Fatal(err)
		}
		rels, err := st.UnitRelations(ctx, uuid, "wordpress/0", members)
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := st.ReceiverTasks(ctx, uuid, "wordpress/0")
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(w.Unit, u) {
			t.Errorf("unit %v, want %v", w.Unit, u)
		}
		if !proto.Equal(w.Application.Application, app.Application) || w.Application.Leader != "wordpress/0" ||
			w.Application.ConfigJSON != app.ConfigJSON || w.Application.ModelName != app.ModelName ||
			!reflect.DeepEqual(w.Application.ModelConfig, app.ModelConfig) {
			t.Errorf("application %+v, want %+v", w.Application, app)
		}
		if len(w.Relations) != len(rels) || len(rels) != 2 {
			t.Fatalf("%d relations, want %d (2)", len(w.Relations), len(rels))
		}
		for i := range rels {
			if !proto.Equal(w.Relations[i].Relation, rels[i].Relation) || w.Relations[i].InScope != rels[i].InScope ||
				w.Relations[i].ShouldJoin != rels[i].ShouldJoin || !reflect.DeepEqual(w.Relations[i].Members, rels[i].Members) {
				t.Errorf("relation %d: %+v, want %+v", i, w.Relations[i], rels[i])
			}
		}
		sameTasks(t, "unit", w.Tasks, tasks)
		if len(tasks) != 1 {
			t.Errorf("%d tasks queued, want 1", len(tasks))
		}
	}
	if w, err := st.ReadUnitWorld(ctx, uuid, "wordpress/0", nil, false); err != nil || w.Tasks != nil {
		t.Errorf("without tasks: %v, %v", w.Tasks, err)
	}
	if _, err := st.ReadUnitWorld(ctx, uuid, "wordpress/7", nil, true); !errors.Is(err, apierr.NotFound) {
		t.Errorf("a unit that is not there: %v, want NotFound", err)
	}
}

// A machine agent's one read gives its machine, its units and its task queue as the separate
// reads do.
func TestReadMachineWorldIsTheSeparateReads(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	u, err := st.Unit(ctx, uuid, units[0])
	if err != nil {
		t.Fatal(err)
	}
	id := u.MachineId
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{id}, Command: "hostname"})
	w, err := st.ReadMachineWorld(ctx, uuid, id, true, true)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Machine(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	on, err := st.MachineUnits(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := st.ReceiverTasks(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(w.Machine, m) {
		t.Errorf("machine %v, want %v", w.Machine, m)
	}
	if len(w.Units) != 1 || len(on) != 1 || !proto.Equal(w.Units[0], on[0]) {
		t.Errorf("units %v, want %v", w.Units, on)
	}
	sameTasks(t, "machine", w.Tasks, tasks)
	if len(tasks) != 1 {
		t.Errorf("%d tasks queued, want 1", len(tasks))
	}
	if w, err := st.ReadMachineWorld(ctx, uuid, id, false, false); err != nil || w.Machine != nil || w.Tasks != nil || len(w.Units) != 1 {
		t.Errorf("units alone: %+v, %v", w, err)
	}
	if _, err := st.ReadMachineWorld(ctx, uuid, "99", true, false); !errors.Is(err, apierr.NotFound) {
		t.Errorf("a machine that is not there: %v, want NotFound", err)
	}
}
