package names

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateApplicationName(t *testing.T) {
	tests := []struct {
		name string
		err  string
	}{
		{"mysql", ""},
		{"wordpress", ""},
		{"a", ""},
		{"app-1a", ""},
		{"app-a1", ""},
		{"my-app-2x", ""},
		{"a1b2", ""},
		{"Foo", `invalid application name "Foo", unexpected uppercase character`},
		{"fooBar", `invalid application name "fooBar", unexpected uppercase character`},
		{"a-1", `invalid application name "a-1", unexpected number(s) found after last hyphen`},
		{"app-12", `invalid application name "app-12", unexpected number(s) found after last hyphen`},
		{"x", ""},
		{"1app", `invalid application name "1app"`},
		{"", `invalid application name ""`},
		{"app-", `invalid application name "app-"`},
		{"-app", `invalid application name "-app"`},
		{"app--b", `invalid application name "app--b"`},
		{"app_b", `invalid application name "app_b"`},
		{"app/0", `invalid application name "app/0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateApplicationName(tt.name)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !IsValidApplication(tt.name) {
					t.Fatalf("IsValidApplication(%q) = false", tt.name)
				}
				return
			}
			if err == nil || err.Error() != tt.err {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
			if IsValidApplication(tt.name) {
				t.Fatalf("IsValidApplication(%q) = true", tt.name)
			}
		})
	}
}

// A new application's name must fit a unit's directory name (unit-<app>-<n>) in 255 bytes;
// the form alone (IsValidApplication) has no bound, so that an older application stays
// nameable. A long name is quoted short: an error is one line.
func TestApplicationNameLength(t *testing.T) {
	fits := "a" + strings.Repeat("b", MaxApplicationLength-1)
	if err := ValidateApplicationName(fits); err != nil {
		t.Fatalf("%d characters: %v", len(fits), err)
	}
	if n := len("unit-" + fits + "-9223372036854775807"); n > 255 {
		t.Fatalf("a unit's directory name would be %d bytes", n)
	}
	long := fits + "c"
	want := `invalid application name "abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"...: 201 characters, at most 200`
	if err := ValidateApplicationName(long); err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if !IsValidApplication(long) {
		t.Fatal("IsValidApplication refused a long name of the right form")
	}
	upper := "A" + strings.Repeat("b", 300)
	want = `invalid application name "Abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"..., unexpected uppercase character`
	if err := ValidateApplicationName(upper); err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestUnit(t *testing.T) {
	tests := []struct {
		unit  string
		valid bool
		app   string
		num   int
	}{
		{"mysql/0", true, "mysql", 0},
		{"mysql/10", true, "mysql", 10},
		{"my-app-2x/123", true, "my-app-2x", 123},
		{"mysql/01", false, "", 0},
		{"mysql", false, "", 0},
		{"mysql/", false, "", 0},
		{"/0", false, "", 0},
		{"Mysql/0", false, "", 0},
		{"mysql/-1", false, "", 0},
		{"mysql/0/1", false, "", 0},
		{"a-1/0", false, "", 0},
		{"mysql/99999999999999999999999", true, "mysql", -1},
	}
	for _, tt := range tests {
		t.Run(tt.unit, func(t *testing.T) {
			if got := IsValidUnit(tt.unit); got != tt.valid {
				t.Fatalf("IsValidUnit = %v, want %v", got, tt.valid)
			}
			app, err := UnitApplication(tt.unit)
			if tt.valid {
				if err != nil || app != tt.app {
					t.Fatalf("UnitApplication = %q, %v", app, err)
				}
			} else if err == nil || err.Error() != `invalid unit name "`+tt.unit+`"` {
				t.Fatalf("UnitApplication error = %v", err)
			}
			num, err := UnitNumber(tt.unit)
			switch {
			case tt.num < 0:
				if err == nil {
					t.Fatalf("UnitNumber: expected overflow error")
				}
			case tt.valid:
				if err != nil || num != tt.num {
					t.Fatalf("UnitNumber = %d, %v", num, err)
				}
			default:
				if err == nil || err.Error() != `invalid unit name "`+tt.unit+`"` {
					t.Fatalf("UnitNumber error = %v", err)
				}
			}
		})
	}
}

func TestIsValidMachine(t *testing.T) {
	tests := []struct {
		id    string
		valid bool
	}{
		{"0", true},
		{"1", true},
		{"42", true},
		{"0/lxd/1", true},
		{"0/lxd/0/kvm/3", true},
		{"10/kvm/10", true},
		{"", false},
		{"01", false},
		{"0/lxd/01", false},
		{"0/lxd", false},
		{"0/lxd/", false},
		{"0/LXD/1", false},
		{"-1", false},
		{"a", false},
		{"0/1/2", false},
		{" 0", false},
	}
	for _, tt := range tests {
		if got := IsValidMachine(tt.id); got != tt.valid {
			t.Errorf("IsValidMachine(%q) = %v, want %v", tt.id, got, tt.valid)
		}
	}
}

func TestIsValidEndpoint(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{"db", true},
		{"juju-info", true},
		{"admin_db", true},
		{"db2", true},
		{"a-1", true},
		{"a_b-c", true},
		{"", false},
		{"Db", false},
		{"1db", false},
		{"db-", false},
		{"db__x", false},
		{"db:x", false},
		{"-db", false},
	}
	for _, tt := range tests {
		if got := IsValidEndpoint(tt.name); got != tt.valid {
			t.Errorf("IsValidEndpoint(%q) = %v, want %v", tt.name, got, tt.valid)
		}
	}
}

func TestIsValidModel(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{"default", true},
		{"my-model", true},
		{"1model", true},
		{"model-", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"-model", false},
		{"Model", false},
		{"my_model", false},
		{"my.model", false},
	}
	for _, tt := range tests {
		if got := IsValidModel(tt.name); got != tt.valid {
			t.Errorf("IsValidModel(%q) = %v, want %v", tt.name, got, tt.valid)
		}
	}
}

func TestIsValidController(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{"lxd", true},
		{"prod-1", true},
		{"0", true},
		{"foo-", true},
		{"Bad_Name", false},
		{"fooBar", false},
		{"foo_bar", false},
		{"foo.bar", false},
		{"foo@bar", false},
		{"", false},
		{"-ctrl", false},
		{".ctrl", false},
		{"ctrl name", false},
		{"ctrl:x", false},
	}
	for _, tt := range tests {
		if got := IsValidController(tt.name); got != tt.valid {
			t.Errorf("IsValidController(%q) = %v, want %v", tt.name, got, tt.valid)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	tests := []struct {
		a, b string
		less bool
	}{
		{"pg/2", "pg/10", true},
		{"pg/10", "pg/2", false},
		{"2", "10", true},
		{"10", "2", false},
		{"0/lxd/1", "1", true},
		{"1", "0/lxd/1", false},
		{"0", "0/lxd/0", true},
		{"0/lxd/2", "0/lxd/10", true},
		{"a", "b", true},
		{"a", "a", false},
		{"", "a", true},
		{"a", "", false},
		{"mysql/0", "mysql/0", false},
		{"app/1", "app2/0", true},
		{"01", "1", true},
		{"1", "01", false},
		{"99999999999999999999998", "99999999999999999999999", true},
	}
	for _, tt := range tests {
		if got := NaturalLess(tt.a, tt.b); got != tt.less {
			t.Errorf("NaturalLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.less)
		}
	}
}

func TestNaturalSort(t *testing.T) {
	in := []string{"10", "pg/10", "1", "0/lxd/10", "pg/2", "0/lxd/2", "0", "2"}
	want := []string{"0", "0/lxd/2", "0/lxd/10", "1", "2", "10", "pg/2", "pg/10"}
	slices.SortFunc(in, func(a, b string) int {
		switch {
		case NaturalLess(a, b):
			return -1
		case NaturalLess(b, a):
			return 1
		}
		return 0
	})
	if !slices.Equal(in, want) {
		t.Fatalf("got %v, want %v", in, want)
	}
}
