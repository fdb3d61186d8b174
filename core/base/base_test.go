package base

import "testing"

func mustParse(t *testing.T, s string) Base {
	t.Helper()
	b, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return b
}

// TestParse restates Juju 3.6's base and channel parser tests
// (core/base): what ParseBaseFromString accepts and refuses, and how the
// result prints.
func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Base
		str     string
		display string
		err     string
	}{
		{in: "ubuntu@22.04", want: Base{"ubuntu", Channel{"22.04", "stable"}}, str: "ubuntu@22.04/stable", display: "ubuntu@22.04"},
		{in: "ubuntu@22.04/stable", want: Base{"ubuntu", Channel{"22.04", "stable"}}, str: "ubuntu@22.04/stable", display: "ubuntu@22.04"},
		{in: "ubuntu@22.04/edge", want: Base{"ubuntu", Channel{"22.04", "edge"}}, str: "ubuntu@22.04/edge", display: "ubuntu@22.04/edge"},
		{in: "ubuntu@22.04/beta", want: Base{"ubuntu", Channel{"22.04", "beta"}}, str: "ubuntu@22.04/beta", display: "ubuntu@22.04/beta"},
		{in: "ubuntu@20.04/candidate", want: Base{"ubuntu", Channel{"20.04", "candidate"}}, str: "ubuntu@20.04/candidate", display: "ubuntu@20.04/candidate"},
		{in: "centos@7", want: Base{"centos", Channel{"7", "stable"}}, str: "centos@7/stable", display: "centos@7"},
		// Juju checks neither the OS nor the track when parsing: these are
		// refused later, as bases nothing runs.
		{in: "ubuntu@all", want: Base{"ubuntu", Channel{"all", "stable"}}, str: "ubuntu@all/stable", display: "ubuntu@all"},
		{in: "ubuntu@stable", want: Base{"ubuntu", Channel{"stable", "stable"}}, str: "ubuntu@stable/stable", display: "ubuntu@stable"},
		{in: "ubuntu@22.04-blah", want: Base{"ubuntu", Channel{"22.04-blah", "stable"}}, str: "ubuntu@22.04-blah/stable", display: "ubuntu@22.04-blah"},
		{in: "Ubuntu@22.04", want: Base{"Ubuntu", Channel{"22.04", "stable"}}, str: "Ubuntu@22.04/stable", display: "Ubuntu@22.04"},
		{in: "ubu ntu@22.04", want: Base{"ubu ntu", Channel{"22.04", "stable"}}, str: "ubu ntu@22.04/stable", display: "ubu ntu@22.04"},
		{in: "@22.04", want: Base{"", Channel{"22.04", "stable"}}, str: "", display: ""},

		{in: "ubuntu", err: "expected base string to contain os and channel separated by '@'"},
		{in: "foo", err: "expected base string to contain os and channel separated by '@'"},
		{in: "", err: "expected base string to contain os and channel separated by '@'"},
		{in: "jammy", err: "expected base string to contain os and channel separated by '@'"},
		{in: "ubuntu@22.04@x", err: "expected base string to contain os and channel separated by '@'"},
		{in: "ubuntu@", err: "empty channel not valid"},
		{in: "ubuntu@22.04/edge/foo", err: `channel is malformed and has too many components "22.04/edge/foo"`},
		{in: "ubuntu@20.04/candidate/fix-1", err: `channel is malformed and has too many components "20.04/candidate/fix-1"`},
		{in: "ubuntu@22.04/stable/", err: `channel is malformed and has too many components "22.04/stable/"`},
		{in: "ubuntu@22.04/foo", err: `risk in channel "22.04/foo" not valid`},
		{in: "ubuntu@22.04/daily", err: `risk in channel "22.04/daily" not valid`},
		{in: "ubuntu@22.04/", err: `risk in channel "22.04/" not valid`},
		{in: "ubuntu@/", err: `risk in channel "/" not valid`},
		{in: "ubuntu@/foo", err: `risk in channel "/foo" not valid`},
		{in: "ubuntu@/stable", err: `track in channel "/stable" not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			if got.String() != tt.str || got.DisplayString() != tt.display {
				t.Fatalf("String %q, DisplayString %q", got.String(), got.DisplayString())
			}
			if got.OS == "" {
				return
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip: %#v, %v", again, err)
			}
		})
	}
}

func TestParseChannel(t *testing.T) {
	tests := []struct {
		in   string
		want Channel
		err  string
	}{
		{in: "22.04", want: Channel{Track: "22.04"}},
		{in: "22.04/edge", want: Channel{Track: "22.04", Risk: "edge"}},
		{in: "all", want: Channel{Track: "all"}},
		{in: "", err: "empty channel not valid"},
		{in: "22.04/edge/foo", err: `channel is malformed and has too many components "22.04/edge/foo"`},
		{in: "22.04/foo", err: `risk in channel "22.04/foo" not valid`},
		{in: "/edge", err: `track in channel "/edge" not valid`},
	}
	for _, tt := range tests {
		got, err := ParseChannel(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: got error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %#v, %v", tt.in, got, err)
		}
	}
}

func TestChannelStrings(t *testing.T) {
	tests := []struct {
		c            Channel
		str, display string
	}{
		{Channel{Track: "22.04"}, "22.04", "22.04"},
		{Channel{Track: "20.04", Risk: "stable"}, "20.04/stable", "20.04"},
		{Channel{Track: "22.04", Risk: "edge"}, "22.04/edge", "22.04/edge"},
	}
	for _, tt := range tests {
		if tt.c.String() != tt.str || tt.c.DisplayString() != tt.display {
			t.Errorf("%#v: String %q, DisplayString %q", tt.c, tt.c.String(), tt.c.DisplayString())
		}
	}
}

func TestStringWithoutRisk(t *testing.T) {
	tests := []struct {
		b       Base
		str     string
		display string
	}{
		{Base{"ubuntu", Channel{Track: "22.04"}}, "ubuntu@22.04", "ubuntu@22.04"},
		{Base{"ubuntu", Channel{Track: "18.04"}}, "ubuntu@18.04", "ubuntu@18.04"},
		{Base{"kubuntu", Channel{Track: "20.04", Risk: "stable"}}, "kubuntu@20.04/stable", "kubuntu@20.04"},
		{Base{"qubuntu", Channel{Track: "22.04", Risk: "edge"}}, "qubuntu@22.04/edge", "qubuntu@22.04/edge"},
		{Base{}, "", ""},
	}
	for _, tt := range tests {
		if tt.b.String() != tt.str || tt.b.DisplayString() != tt.display {
			t.Errorf("%#v: String %q, DisplayString %q", tt.b, tt.b.String(), tt.b.DisplayString())
		}
	}
}

func TestIsCompatibleAndZero(t *testing.T) {
	tests := []struct {
		a, b       Base
		compatible bool
	}{
		{MakeDefault("ubuntu", "22.04"), Base{"ubuntu", Channel{Track: "22.04"}}, true},
		{MakeDefault("ubuntu", "22.04"), Base{"ubuntu", Channel{"22.04", "edge"}}, true},
		{MakeDefault("ubuntu", "22.04"), MakeDefault("ubuntu", "24.04"), false},
		{MakeDefault("ubuntu", "7"), MakeDefault("centos", "7"), false},
	}
	for _, tt := range tests {
		if got := tt.a.IsCompatible(tt.b); got != tt.compatible {
			t.Errorf("%v.IsCompatible(%v) = %v", tt.a, tt.b, got)
		}
	}
	if !(Base{}).IsZero() || MakeDefault("ubuntu", "22.04").IsZero() {
		t.Errorf("IsZero wrong")
	}
}

func TestSeries(t *testing.T) {
	tests := []struct {
		series string
		base   string
	}{
		{"focal", "ubuntu@20.04"},
		{"groovy", "ubuntu@20.10"},
		{"hirsute", "ubuntu@21.04"},
		{"impish", "ubuntu@21.10"},
		{"jammy", "ubuntu@22.04"},
		{"kinetic", "ubuntu@22.10"},
		{"lunar", "ubuntu@23.04"},
		{"mantic", "ubuntu@23.10"},
		{"noble", "ubuntu@24.04"},
		{"oracular", "ubuntu@24.10"},
		{"bionic", "ubuntu@18.04"},
		{"precise", "ubuntu@12.04"},
		{"quantal", "ubuntu@12.10"},
		{"raring", "ubuntu@13.04"},
		{"saucy", "ubuntu@13.10"},
		{"trusty", "ubuntu@14.04"},
		{"utopic", "ubuntu@14.10"},
		{"vivid", "ubuntu@15.04"},
		{"wily", "ubuntu@15.10"},
		{"xenial", "ubuntu@16.04"},
		{"yakkety", "ubuntu@16.10"},
		{"zesty", "ubuntu@17.04"},
		{"artful", "ubuntu@17.10"},
		{"cosmic", "ubuntu@18.10"},
		{"disco", "ubuntu@19.04"},
		{"eoan", "ubuntu@19.10"},
		{"plucky", "ubuntu@25.04"},
		{"questing", "ubuntu@25.10"},
		{"resolute", "ubuntu@26.04"},
		{"centos7", "centos@7"},
		{"centos9", "centos@9"},
	}
	for _, tt := range tests {
		b, err := FromSeries(tt.series)
		if err != nil {
			t.Fatalf("FromSeries(%q): %v", tt.series, err)
		}
		if b != mustParse(t, tt.base) {
			t.Errorf("FromSeries(%q) = %v, want %v", tt.series, b, tt.base)
		}
		s, err := mustParse(t, tt.base+"/edge").Series()
		if err != nil || s != tt.series {
			t.Errorf("Series(%q) = %q, %v", tt.base, s, err)
		}
	}
	if _, err := FromSeries("foo"); err == nil || err.Error() != `series "foo" not valid` {
		t.Errorf("FromSeries(foo) error = %v", err)
	}
	if _, err := mustParse(t, "ubuntu@99.04").Series(); err == nil || err.Error() != `os "ubuntu" version "99.04" not found` {
		t.Errorf("Series error = %v", err)
	}
}

func TestSupported(t *testing.T) {
	tests := []struct {
		base string
		ok   bool
	}{
		{"ubuntu@20.04", true},
		{"ubuntu@22.04/edge", true},
		{"ubuntu@24.04", true},
		{"ubuntu@18.04", false},
		{"ubuntu@24.10", false},
		{"centos@7", false},
	}
	for _, tt := range tests {
		if got := IsSupported(mustParse(t, tt.base)); got != tt.ok {
			t.Errorf("IsSupported(%q) = %v", tt.base, got)
		}
	}
	if got := SupportedString(); got != "ubuntu@20.04, ubuntu@22.04, ubuntu@24.04" {
		t.Errorf("SupportedString() = %q", got)
	}
	if DefaultLTS.String() != "ubuntu@24.04/stable" || !IsSupported(DefaultLTS) {
		t.Errorf("DefaultLTS = %v", DefaultLTS)
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name      string
		requested string
		model     string
		charm     []string
		force     bool
		want      string
		err       string
	}{
		{name: "requested", requested: "ubuntu@20.04", charm: []string{"ubuntu@22.04", "ubuntu@20.04"}, want: "ubuntu@20.04/stable"},
		{name: "requested beats model", requested: "ubuntu@20.04", model: "ubuntu@22.04", charm: []string{"ubuntu@22.04", "ubuntu@20.04"}, want: "ubuntu@20.04/stable"},
		{name: "requested keeps risk", requested: "ubuntu@22.04/edge", charm: []string{"ubuntu@22.04"}, want: "ubuntu@22.04/edge"},
		{name: "charm base only", charm: []string{"ubuntu@22.04"}, want: "ubuntu@22.04/stable"},
		{name: "requested not in charm", requested: "ubuntu@20.04", charm: []string{"ubuntu@22.04", "ubuntu@24.04"},
			err: `base "ubuntu@20.04" is not supported, supported bases are: ubuntu@22.04, ubuntu@24.04`},
		{name: "charm list deduplicated", requested: "ubuntu@20.04", charm: []string{"ubuntu@22.04", "ubuntu@22.04/stable", "ubuntu@18.04"},
			err: `base "ubuntu@20.04" is not supported, supported bases are: ubuntu@22.04, ubuntu@18.04`},
		{name: "force accepts requested", requested: "ubuntu@20.04", charm: []string{"ubuntu@22.04"}, force: true, want: "ubuntu@20.04/stable"},
		{name: "old ubuntu requested", requested: "ubuntu@18.04", charm: []string{"ubuntu@18.04"}, want: "ubuntu@18.04/stable"},
		{name: "requested not run locally", requested: "centos@7", charm: []string{"centos@7"},
			err: `base: centos@7/stable not supported: the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
		{name: "force does not help unsupported", requested: "ubuntu@99.04", charm: []string{"ubuntu@22.04"}, force: true,
			err: `base: ubuntu@99.04/stable not supported: the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
		{name: "model default", model: "ubuntu@22.04", charm: []string{"ubuntu@24.04", "ubuntu@22.04"}, want: "ubuntu@22.04/stable"},
		{name: "model default not in charm", model: "ubuntu@20.04", charm: []string{"ubuntu@22.04"},
			err: `base "ubuntu@20.04" is not supported, supported bases are: ubuntu@22.04`},
		{name: "model default forced", model: "ubuntu@20.04", charm: []string{"ubuntu@22.04"}, force: true, want: "ubuntu@20.04/stable"},
		{name: "default LTS preferred", charm: []string{"ubuntu@22.04", "ubuntu@24.04"}, want: "ubuntu@24.04/stable"},
		{name: "first supported charm base", charm: []string{"ubuntu@18.04", "ubuntu@20.04", "ubuntu@22.04"}, want: "ubuntu@20.04/stable"},
		{name: "charm base without risk normalised", charm: []string{"ubuntu@22.04"}, want: "ubuntu@22.04/stable"},
		{name: "no charm bases", charm: nil, err: `charm does not define any bases, not valid`},
		{name: "no charm bases with request", requested: "ubuntu@22.04", charm: nil, err: `charm does not define any bases, not valid`},
		{name: "old series charm runs locally", charm: []string{"ubuntu@12.10"}, want: "ubuntu@12.10/stable"},
		{name: "juju-supported preferred over old", charm: []string{"ubuntu@18.04", "ubuntu@22.04"}, want: "ubuntu@22.04/stable"},
		{name: "newest non-LTS", charm: []string{"ubuntu@26.04"}, want: "ubuntu@26.04/stable"},
		{name: "old before other os", charm: []string{"centos@7", "ubuntu@18.04"}, want: "ubuntu@18.04/stable"},
		{name: "no base run locally", charm: []string{"centos@7", "centos@9"}, err: `the charm defined bases "centos@7, centos@9" not supported: the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
		{name: "unknown ubuntu", charm: []string{"ubuntu@99.04"}, err: `the charm defined bases "ubuntu@99.04" not supported: the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var requested, model Base
			if tt.requested != "" {
				requested = mustParse(t, tt.requested)
			}
			if tt.model != "" {
				model = mustParse(t, tt.model)
			}
			var charm []Base
			for _, s := range tt.charm {
				charm = append(charm, mustParse(t, s))
			}
			got, err := Select(requested, model, charm, tt.force)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.String() != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectNormalisesUnparsedBases(t *testing.T) {
	charm := []Base{{OS: "ubuntu", Channel: Channel{Track: "22.04"}}}
	got, err := Select(Base{OS: "ubuntu", Channel: Channel{Track: "22.04"}}, Base{}, charm, false)
	if err != nil || got.String() != "ubuntu@22.04/stable" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestLocalProviderRuns(t *testing.T) {
	tests := []struct {
		base string
		ok   bool
	}{
		{"ubuntu@12.04", true},
		{"ubuntu@12.10", true},
		{"ubuntu@18.04", true},
		{"ubuntu@24.04/edge", true},
		{"ubuntu@26.04", true},
		{"ubuntu@11.10", false},
		{"ubuntu@26.10", false},
		{"centos@7", false},
		{"debian@12", false},
	}
	for _, tt := range tests {
		if got := LocalProviderRuns(mustParse(t, tt.base)); got != tt.ok {
			t.Errorf("LocalProviderRuns(%q) = %v", tt.base, got)
		}
	}
	if got := LocalProviderString(); got != "the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04" {
		t.Errorf("LocalProviderString() = %q", got)
	}
}
