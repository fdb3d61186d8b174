package life

import "testing"

func TestValidate(t *testing.T) {
	tests := []struct {
		life Life
		err  string
	}{
		{Alive, ""},
		{Dying, ""},
		{Dead, ""},
		{"", `invalid life ""`},
		{"Alive", `invalid life "Alive"`},
		{"zombie", `invalid life "zombie"`},
	}
	for _, tt := range tests {
		err := tt.life.Validate()
		if tt.err == "" {
			if err != nil {
				t.Errorf("%q: unexpected error %v", tt.life, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.err {
			t.Errorf("%q: got %v, want %q", tt.life, err, tt.err)
		}
	}
}

func TestIsNotAlive(t *testing.T) {
	tests := []struct {
		life     Life
		notAlive bool
		dead     bool
	}{
		{Alive, false, false},
		{Dying, true, false},
		{Dead, true, true},
		{"", false, false},
	}
	for _, tt := range tests {
		if got := tt.life.IsNotAlive(); got != tt.notAlive {
			t.Errorf("%q.IsNotAlive() = %v", tt.life, got)
		}
		if got := tt.life.IsDead(); got != tt.dead {
			t.Errorf("%q.IsDead() = %v", tt.life, got)
		}
		if tt.life.String() != string(tt.life) {
			t.Errorf("%q.String() = %q", tt.life, tt.life.String())
		}
	}
}

func TestCanMove(t *testing.T) {
	tests := []struct {
		from, to Life
		ok       bool
	}{
		{Alive, Alive, true},
		{Alive, Dying, true},
		{Alive, Dead, true},
		{Dying, Dying, true},
		{Dying, Dead, true},
		{Dead, Dead, true},
		{Dying, Alive, false},
		{Dead, Alive, false},
		{Dead, Dying, false},
		{"", Alive, false},
		{Alive, "bogus", false},
	}
	for _, tt := range tests {
		if got := CanMove(tt.from, tt.to); got != tt.ok {
			t.Errorf("CanMove(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}
