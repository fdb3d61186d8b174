package selector

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in           string
		name, status bool
	}{
		{"mysql", true, false},
		{"mysql/0", true, false},
		{"mysql/*", true, false},
		{"my*", true, false},
		{"*", true, false},
		{"*/0", true, false},
		{"0", true, false},
		{"0/lxd/1", true, false},
		{"0/lxd/*", true, false},
		{"1*", true, false},
		{"active", true, true},
		{"error", true, true},
		{"idle", true, true},
		{"started", true, true},
		{"provisioning error", false, true},
	}
	for _, tt := range tests {
		sel, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if sel.Name != tt.name || sel.Status != tt.status || sel.Pattern != tt.in {
			t.Errorf("Parse(%q) = %+v", tt.in, sel)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, in := range []string{"", "mysql/x", "[", "my?sql", "Foo", "app-1", "mysql/0/1", "0/LXD/1", "0/lxd", "mysql:db", "a b", "/", "*/x", "my*/x"} {
		_, err := Parse(in)
		want := `invalid selector "` + in + `": expected an application, unit or machine name ("*" wildcards allowed) or a status value`
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error of several lines", in)
		}
	}
	if _, err := ParseAll([]string{"mysql", "mysql/x", "["}); err == nil || !strings.Contains(err.Error(), `"mysql/x"`) {
		t.Errorf("ParseAll: %v", err)
	}
	if sels, err := ParseAll([]string{"mysql", "active"}); err != nil || len(sels) != 2 {
		t.Errorf("ParseAll = %v, %v", sels, err)
	}
}

func TestMatch(t *testing.T) {
	must := func(p string) Selector {
		s, err := Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		sel, name string
		want      bool
	}{
		{"mysql", "mysql", true},
		{"mysql", "mysql-router", false},
		{"mysql*", "mysql-router", true},
		{"mysql*", "mysql/0", false},
		{"mysql/*", "mysql/10", true},
		{"*/0", "wordpress/0", true},
		{"*", "wordpress", true},
		{"1*", "10", true},
		{"provisioning error", "provisioning error", false},
	}
	for _, tt := range tests {
		if got := must(tt.sel).MatchName(tt.name); got != tt.want {
			t.Errorf("%q.MatchName(%q) = %v", tt.sel, tt.name, got)
		}
	}
	machines := []struct {
		sel, id string
		want    bool
	}{
		{"0", "0", true},
		{"0", "0/lxd/1", true},
		{"0", "10", false},
		{"0/lxd/1", "0/lxd/1", true},
		{"0/lxd/*", "0/lxd/12", true},
		{"0/lxd/1", "0/lxd/10", false},
		{"*", "3/lxd/0", true},
		{"1*", "12/lxd/0", true},
	}
	for _, tt := range machines {
		if got := must(tt.sel).MatchMachine(tt.id); got != tt.want {
			t.Errorf("%q.MatchMachine(%q) = %v", tt.sel, tt.id, got)
		}
	}
	if !must("active").MatchStatus("active") || must("active").MatchStatus("") || must("mysql").MatchStatus("mysql") ||
		!must("provisioning error").MatchStatus("provisioning error") {
		t.Error("MatchStatus wrong")
	}
}
