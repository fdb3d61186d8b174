package status

import "testing"

func TestValues(t *testing.T) {
	tests := []struct {
		s    Status
		text string
	}{
		{Allocating, "allocating"},
		{Idle, "idle"},
		{Executing, "executing"},
		{Rebooting, "rebooting"},
		{Failed, "failed"},
		{Lost, "lost"},
		{Error, "error"},
		{Maintenance, "maintenance"},
		{Waiting, "waiting"},
		{Blocked, "blocked"},
		{Active, "active"},
		{Unknown, "unknown"},
		{Terminated, "terminated"},
		{Pending, "pending"},
		{Started, "started"},
		{Down, "down"},
		{Stopped, "stopped"},
		{Running, "running"},
		{ProvisioningError, "provisioning error"},
		{Applied, "applied"},
		{Joining, "joining"},
		{Joined, "joined"},
		{Broken, "broken"},
		{Suspending, "suspending"},
		{Available, "available"},
		{Busy, "busy"},
		{Destroying, "destroying"},
		{Suspended, "suspended"},
	}
	for _, tt := range tests {
		if tt.s.String() != tt.text {
			t.Errorf("got %q, want %q", tt.s.String(), tt.text)
		}
	}
}

func TestIsCharmWorkload(t *testing.T) {
	tests := []struct {
		s  Status
		ok bool
	}{
		{Maintenance, true},
		{Waiting, true},
		{Blocked, true},
		{Active, true},
		{Unknown, false},
		{Error, false},
		{Terminated, false},
		{"bogus", false},
	}
	for _, tt := range tests {
		if got := IsCharmWorkload(tt.s); got != tt.ok {
			t.Errorf("IsCharmWorkload(%q) = %v", tt.s, got)
		}
	}
}

func TestSeverityOrder(t *testing.T) {
	order := []Status{Error, Blocked, Maintenance, Waiting, Active, Terminated, Unknown}
	for i := 0; i+1 < len(order); i++ {
		if Severity(order[i]) <= Severity(order[i+1]) {
			t.Errorf("Severity(%q) should exceed Severity(%q)", order[i], order[i+1])
		}
	}
	if Severity("bogus") >= Severity(Unknown) {
		t.Errorf("unrecognised status must rank below unknown")
	}
}

func TestDeriveApplication(t *testing.T) {
	tests := []struct {
		name  string
		units []Status
		want  Status
	}{
		{"no units", nil, Unknown},
		{"empty", []Status{}, Unknown},
		{"single active", []Status{Active}, Active},
		{"error wins", []Status{Active, Error, Blocked}, Error},
		{"blocked over maintenance", []Status{Maintenance, Blocked, Active}, Blocked},
		{"maintenance over waiting", []Status{Waiting, Maintenance}, Maintenance},
		{"waiting over active", []Status{Active, Waiting, Active}, Waiting},
		{"active over terminated", []Status{Terminated, Active}, Active},
		{"terminated over unknown", []Status{Unknown, Terminated}, Terminated},
		{"all unknown", []Status{Unknown, Unknown}, Unknown},
		{"ignores unrecognised", []Status{"bogus"}, Unknown},
		{"ignores agent status", []Status{Idle, Active}, Active},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DeriveApplication(tt.units); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
