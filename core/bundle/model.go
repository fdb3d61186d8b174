package bundle

import (
	"strconv"

	"github.com/jujuclone/juju/core/names"
)

// Model is the model a bundle is deployed to, as the controller describes it (DescribeModel):
// what the plan compares the bundle with. The zero Model is an empty model.
type Model struct {
	// DefaultBase is the model's default base ("ubuntu@22.04"), "" when unset.
	DefaultBase  string
	Applications map[string]*ModelApplication
	Machines     map[string]*ModelMachine
	// Relations are the model's relations between two applications, each as both
	// "application:endpoint", sorted.
	Relations []ModelRelation
}

// ModelApplication is an application of the model.
type ModelApplication struct {
	Name      string
	CharmURL  string
	CharmName string
	// CharmSHA256 is the sha256 of the charm's archive as uploaded.
	CharmSHA256 string
	Base        string
	Subordinate bool
	Life        string
	Constraints string
	// Config holds the values the user set (not defaults), each as JSON.
	Config           map[string]string
	Exposed          bool
	ExposedEndpoints map[string]ExposeSpec
	Annotations      map[string]string
	// Resources are the fingerprints of the application's current resource revisions.
	Resources map[string]string
	Units     []ModelUnit
}

// ModelUnit is a unit of the model; Machine is "" for a subordinate.
type ModelUnit struct {
	Name, Machine, Life string
}

// ModelMachine is a machine of the model.
type ModelMachine struct {
	ID, Base, Life string
	Annotations    map[string]string
}

// ModelRelation is a relation of the model: its two "application:endpoint", sorted.
type ModelRelation struct {
	Endpoints [2]string
	Life      string
}

const alive = "alive"

var naturalCompare = names.NaturalCompare

func (a *ModelApplication) aliveUnits() int {
	if a == nil {
		return 0
	}
	n := 0
	for _, u := range a.Units {
		if u.Life == "" || u.Life == alive {
			n++
		}
	}
	return n
}

// unitOn returns the name of a's alive unit on machine (a top-level machine), "" when none.
func (a *ModelApplication) unitOn(machine string) string {
	if a == nil {
		return ""
	}
	for _, u := range a.Units {
		if (u.Life == "" || u.Life == alive) && topLevel(u.Machine) == machine && u.Machine != "" {
			return u.Name
		}
	}
	return ""
}

func (a *ModelApplication) unitMachine(unit string) string {
	if a == nil {
		return ""
	}
	for _, u := range a.Units {
		if u.Name == unit {
			return u.Machine
		}
	}
	return ""
}

func topLevel(machine string) string {
	for i := 0; i < len(machine); i++ {
		if machine[i] == '/' {
			return machine[:i]
		}
	}
	return machine
}

// sequences predicts the ids the controller gives next: machines and each application's
// units are numbered from one more than the highest in the model.
type sequences struct {
	machine int
	units   map[string]int
}

func newSequences(m *Model) *sequences {
	s := &sequences{units: map[string]int{}}
	for id := range m.Machines {
		if n, err := strconv.Atoi(topLevel(id)); err == nil && n >= s.machine {
			s.machine = n + 1
		}
	}
	for name, app := range m.Applications {
		for _, u := range app.Units {
			if n, err := names.UnitNumber(u.Name); err == nil && n >= s.units[name] {
				s.units[name] = n + 1
			}
		}
	}
	return s
}

func (s *sequences) nextMachine() string {
	n := s.machine
	s.machine++
	return strconv.Itoa(n)
}

func (s *sequences) nextUnit(app string) string {
	n := s.units[app]
	s.units[app] = n + 1
	return app + "/" + strconv.Itoa(n)
}
