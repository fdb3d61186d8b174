package state_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jujuclone/juju/controller/state"
)

// A key of the machines' unit index names its machine, container ids included.
func TestMachineOfUnitIndexKey(t *testing.T) {
	uuid := "u1"
	prefix := state.MachineUnitsIndexPrefix(uuid)
	for key, want := range map[string]string{
		prefix + "0/wordpress/3":                     "0",
		prefix + "12/mysql/0":                        "12",
		prefix + "0/lxd/1/wordpress/0":               "0/lxd/1",
		prefix + "wordpress/0":                       "",
		prefix + "0":                                 "",
		"/juju/models/u2/machineunits/0/wordpress/0": "",
	} {
		got, ok := state.MachineOfUnitIndexKey(uuid, key)
		if got != want || ok != (want != "") {
			t.Errorf("%s: got %q %v, want %q", key, got, ok, want)
		}
	}
}

// The provisioner's reads by change: named machines in batches beyond etcd's operation limit
// (missing ones left out), and an application's machines from its units alone.
func TestMachinesByIDAndApplicationMachineIDs(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	params := make([]state.MachineParams, 150)
	ids, err := st.AddMachines(ctx, uuid, params)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.MachinesByID(ctx, uuid, append(slices.Clone(ids), "999"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) || got[0].Id != ids[0] || got[len(got)-1].Id != ids[len(ids)-1] {
		t.Fatalf("read %d machines of %d", len(got), len(ids))
	}

	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units, err := st.AddUnits(ctx, uuid, "wordpress", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range units {
		u, err := st.Unit(ctx, uuid, name)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, u.MachineId)
	}
	machines, err := st.ApplicationMachineIDs(ctx, uuid, "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(machines)
	slices.Sort(want)
	if !slices.Equal(machines, want) {
		t.Fatalf("machines of wordpress: %v, want %v", machines, want)
	}
	if none, err := st.ApplicationMachineIDs(ctx, uuid, "word"); err != nil || len(none) != 0 {
		t.Fatalf("machines of a prefix of wordpress's name: %v %v", none, err)
	}
}
