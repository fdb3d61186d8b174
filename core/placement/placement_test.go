package placement

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec string
		want []Directive
		err  string
	}{
		{"3", []Directive{{Scope: "#", Machine: "3", Raw: "3"}}, ""},
		{"0/lxd/1", []Directive{{Scope: "#", Machine: "0/lxd/1", Raw: "0/lxd/1"}}, ""},
		{"lxd", []Directive{{Scope: "lxd", Raw: "lxd"}}, ""},
		{"kvm", []Directive{{Scope: "kvm", Raw: "kvm"}}, ""},
		{"lxd:4", []Directive{{Scope: "lxd", Machine: "4", Raw: "lxd:4"}}, ""},
		{"lxd:0/lxd/2", []Directive{{Scope: "lxd", Machine: "0/lxd/2", Raw: "lxd:0/lxd/2"}}, ""},
		{"#:5", []Directive{{Scope: "#", Machine: "5", Raw: "#:5"}}, ""},
		{"zone=us-east-1a", []Directive{{Raw: "zone=us-east-1a"}}, ""},
		{"node1.maas", []Directive{{Raw: "node1.maas"}}, ""},
		{"1,lxd:2,lxd,zone=a", []Directive{
			{Scope: "#", Machine: "1", Raw: "1"},
			{Scope: "lxd", Machine: "2", Raw: "lxd:2"},
			{Scope: "lxd", Raw: "lxd"},
			{Raw: "zone=a"},
		}, ""},
		{"", nil, `invalid --to parameter ""`},
		{"4,5,,", nil, `invalid --to parameter "4,5,,"`},
		{",1", nil, `invalid --to parameter ",1"`},
		{"01", nil, `invalid --to parameter "01"`},
		{"1,0/lxd", nil, `invalid --to parameter "1,0/lxd"`},
		{"0/lxd/01", nil, `invalid --to parameter "0/lxd/01"`},
		{"lxd:", nil, `invalid --to parameter "lxd:"`},
		{"lxd:x", nil, `invalid --to parameter "lxd:x"`},
		{"lxd:01", nil, `invalid --to parameter "lxd:01"`},
		{"foo:1", nil, `invalid --to parameter "foo:1"`},
		{":1", nil, `invalid --to parameter ":1"`},
		{"-1", nil, `invalid --to parameter "-1"`},
		{"=x", nil, `invalid --to parameter "=x"`},
		{"zone=a b", nil, `invalid --to parameter "zone=a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := Parse(tt.spec)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDirective(t *testing.T) {
	tests := []struct {
		raw                             string
		str                             string
		existing, container, isProvider bool
	}{
		{"3", "3", true, false, false},
		{"0/lxd/1", "0/lxd/1", true, false, false},
		{"#:5", "5", true, false, false},
		{"lxd", "lxd", false, true, false},
		{"kvm:2", "kvm:2", false, true, false},
		{"zone=z", "zone=z", false, false, true},
	}
	for _, tt := range tests {
		ds, err := Parse(tt.raw)
		if err != nil {
			t.Fatalf("%q: %v", tt.raw, err)
		}
		d := ds[0]
		if d.String() != tt.str {
			t.Errorf("%q: String() = %q, want %q", tt.raw, d.String(), tt.str)
		}
		if d.IsExisting() != tt.existing || d.IsContainer() != tt.container || d.IsProvider() != tt.isProvider {
			t.Errorf("%q: existing %v container %v provider %v", tt.raw, d.IsExisting(), d.IsContainer(), d.IsProvider())
		}
		again, err := Parse(d.String())
		if err != nil || again[0].Scope != d.Scope || again[0].Machine != d.Machine {
			t.Errorf("%q: round trip %+v, %v", tt.raw, again, err)
		}
	}
}
