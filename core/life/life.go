// Package life defines the alive → dying → dead lifecycle shared by
// machines, units, applications and relations.
package life

import "fmt"

// Life is the lifecycle stage of an entity.
type Life string

const (
	Alive Life = "alive"
	Dying Life = "dying"
	Dead  Life = "dead"
)

// rank orders the stages so that CanMove can forbid going backwards.
func (l Life) rank() int {
	switch l {
	case Alive:
		return 0
	case Dying:
		return 1
	case Dead:
		return 2
	}
	return -1
}

// Validate returns an error if l is not one of the known stages.
func (l Life) Validate() error {
	if l.rank() < 0 {
		return fmt.Errorf("invalid life %q", string(l))
	}
	return nil
}

// IsNotAlive reports whether the entity is dying or dead.
func (l Life) IsNotAlive() bool {
	return l == Dying || l == Dead
}

// IsDead reports whether the entity is dead.
func (l Life) IsDead() bool {
	return l == Dead
}

// String returns the life as text.
func (l Life) String() string {
	return string(l)
}

// CanMove reports whether an entity may go from one stage to another.
// Staying put is allowed; moving backwards never is (L-G1).
func CanMove(from, to Life) bool {
	f, t := from.rank(), to.rank()
	return f >= 0 && t >= 0 && t >= f
}
