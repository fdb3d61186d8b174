package constraints

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func str(s string) *string { return &s }
func u64(n uint64) *uint64 { return &n }
func boolp(b bool) *bool   { return &b }
func list(s ...string) *[]string {
	if s == nil {
		s = []string{}
	}
	return &s
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want Value
		err  string
	}{
		{name: "nothing", args: nil, want: Value{}},
		{name: "blank", args: []string{"  "}, want: Value{}},
		{name: "mem and cores", args: []string{"cores=4 mem=8G"}, want: Value{Cores: u64(4), Mem: u64(8192)}},
		{name: "joined args", args: []string{"cores=4", "mem=8G"}, want: Value{Cores: u64(4), Mem: u64(8192)}},
		{name: "extra spaces", args: []string{"  cores=4   mem=1 "}, want: Value{Cores: u64(4), Mem: u64(1)}},
		{name: "mem no suffix is MB", args: []string{"mem=512"}, want: Value{Mem: u64(512)}},
		{name: "mem M", args: []string{"mem=512M"}, want: Value{Mem: u64(512)}},
		{name: "mem 1.5G rounds", args: []string{"mem=1.5G"}, want: Value{Mem: u64(1536)}},
		{name: "mem rounds up", args: []string{"mem=0.1"}, want: Value{Mem: u64(1)}},
		{name: "mem fractional G rounds up", args: []string{"mem=1.0001G"}, want: Value{Mem: u64(1025)}},
		{name: "root-disk T", args: []string{"root-disk=2T"}, want: Value{RootDisk: u64(2 * 1024 * 1024)}},
		{name: "root-disk P", args: []string{"root-disk=1P"}, want: Value{RootDisk: u64(1024 * 1024 * 1024)}},
		{name: "mem empty", args: []string{"mem="}, want: Value{Mem: u64(0)}},
		{name: "arch", args: []string{"arch=arm64"}, want: Value{Arch: str("arm64")}},
		{name: "arch empty", args: []string{"arch="}, want: Value{Arch: str("")}},
		{name: "all arches", args: []string{"arch=amd64", "container=lxd"}, want: Value{Arch: str("amd64"), Container: str("lxd")}},
		{name: "container none", args: []string{"container=none"}, want: Value{Container: str("none")}},
		{name: "container kvm", args: []string{"container=kvm"}, want: Value{Container: str("kvm")}},
		{name: "cpu-power", args: []string{"cpu-power=100"}, want: Value{CpuPower: u64(100)}},
		{name: "cores empty", args: []string{"cores="}, want: Value{Cores: u64(0)}},
		{name: "strings", args: []string{"instance-type=m5.large instance-role=auto root-disk-source=ssd virt-type=kvm image-id=ami-1"},
			want: Value{InstanceType: str("m5.large"), InstanceRole: str("auto"), RootDiskSource: str("ssd"), VirtType: str("kvm"), ImageID: str("ami-1")}},
		{name: "tags", args: []string{"tags=a,^b"}, want: Value{Tags: list("a", "^b")}},
		{name: "tags empty", args: []string{"tags="}, want: Value{Tags: list()}},
		{name: "tags keep empty items", args: []string{"tags=a,,b,"}, want: Value{Tags: list("a", "", "b", "")}},
		{name: "zones keep empty items", args: []string{"zones=,"}, want: Value{Zones: list("", "")}},
		{name: "spaces", args: []string{"spaces=alpha,^db-2"}, want: Value{Spaces: list("alpha", "^db-2")}},
		{name: "zones", args: []string{"zones=us-east-1a,us-east-1b"}, want: Value{Zones: list("us-east-1a", "us-east-1b")}},
		{name: "allocate-public-ip", args: []string{"allocate-public-ip=true"}, want: Value{AllocatePublicIP: boolp(true)}},
		{name: "allocate-public-ip false", args: []string{"allocate-public-ip=false"}, want: Value{AllocatePublicIP: boolp(false)}},
		{name: "allocate-public-ip empty stores nothing", args: []string{"allocate-public-ip="}, want: Value{}},
		{name: "allocate-public-ip empty after a value", args: []string{"allocate-public-ip=true allocate-public-ip="}, want: Value{AllocatePublicIP: boolp(true)}},
		{name: "allocate-public-ip value after empty", args: []string{"allocate-public-ip=", "allocate-public-ip=false"}, want: Value{AllocatePublicIP: boolp(false)}},
		{name: "instance-type with cores and mem", args: []string{"instance-type=m5.large cores=2 mem=4G cpu-power=10"},
			want: Value{InstanceType: str("m5.large"), Cores: u64(2), Mem: u64(4096), CpuPower: u64(10)}},
		{name: "escaped space at an edge is trimmed", args: []string{`mem=4G\ `}, want: Value{Mem: u64(4096)}},
		{name: "escaped space leading a value is kept", args: []string{`instance-type=\ x`}, want: Value{InstanceType: str(" x")}},
		{name: "tab around an item is trimmed", args: []string{"\tmem=1\t cores=2"}, want: Value{Mem: u64(1), Cores: u64(2)}},
		{name: "escaped space", args: []string{`tags=a\ b,c instance-type=x`}, want: Value{Tags: list("a b", "c"), InstanceType: str("x")}},
		{name: "value with equals", args: []string{"image-id=a=b"}, want: Value{ImageID: str("a=b")}},
		{name: "cpu-cores alias", args: []string{"cpu-cores=2"}, want: Value{Cores: u64(2)}},

		{name: "malformed", args: []string{"foo"}, err: `malformed constraint "foo"`},
		{name: "malformed empty key", args: []string{"=5"}, err: `malformed constraint "=5"`},
		{name: "unknown", args: []string{"foo=bar"}, err: `unknown constraint "foo"`},
		{name: "unknown case", args: []string{"Mem=1"}, err: `unknown constraint "Mem"`},
		{name: "duplicate", args: []string{"mem=1G", "mem=2G"}, err: `bad "mem" constraint: already set`},
		{name: "duplicate empty", args: []string{"mem= mem=2G"}, err: `bad "mem" constraint: already set`},
		{name: "duplicate via alias", args: []string{"cores=1 cpu-cores=2"}, err: `bad "cores" constraint: already set`},
		{name: "bad size", args: []string{"mem=lots"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "lowercase suffix", args: []string{"mem=1g"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "negative size", args: []string{"mem=-1"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "negative fraction", args: []string{"root-disk=-0.5G"}, err: `bad "root-disk" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "suffix only", args: []string{"mem=G"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "nan", args: []string{"mem=NaN"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "inf", args: []string{"mem=Inf"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "overflow", args: []string{"mem=1e30P"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "bad cores", args: []string{"cores=two"}, err: `bad "cores" constraint: must be a non-negative integer`},
		{name: "negative cores", args: []string{"cores=-1"}, err: `bad "cores" constraint: must be a non-negative integer`},
		{name: "float cores", args: []string{"cores=1.5"}, err: `bad "cores" constraint: must be a non-negative integer`},
		{name: "bad cpu-power", args: []string{"cpu-power=x"}, err: `bad "cpu-power" constraint: must be a non-negative integer`},
		{name: "bad alias value", args: []string{"cpu-cores=x"}, err: `bad "cores" constraint: must be a non-negative integer`},
		{name: "bad arch", args: []string{"arch=i386"}, err: `bad "arch" constraint: "i386" not recognized`},
		{name: "armhf rejected", args: []string{"arch=armhf"}, err: `bad "arch" constraint: "armhf" not recognized`},
		{name: "bad bool", args: []string{"allocate-public-ip=maybe"}, err: `bad "allocate-public-ip" constraint: must be 'true' or 'false'`},
		{name: "bad space", args: []string{"spaces=Foo"}, err: `bad "spaces" constraint: "Foo" is not a valid space name`},
		{name: "bad negated space", args: []string{"spaces=a,^Foo"}, err: `bad "spaces" constraint: "Foo" is not a valid space name`},
		{name: "bad container", args: []string{"container=foo"}, err: `bad "container" constraint: invalid container type "foo"`},
		{name: "lxc is not a container type", args: []string{"container=lxc"}, err: `bad "container" constraint: invalid container type "lxc"`},
		{name: "empty space name", args: []string{"spaces=a,,b"}, err: `bad "spaces" constraint: "" is not a valid space name`},
		{name: "tab is not a separator", args: []string{"mem=4G\tcores=2"}, err: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "malformed keeps escaped space", args: []string{`foo\ bar`}, err: `malformed constraint "foo bar"`},
		{name: "allocate-public-ip twice", args: []string{"allocate-public-ip=true allocate-public-ip=false"}, err: `bad "allocate-public-ip" constraint: already set`},
		{name: "first error wins", args: []string{"foo mem=x"}, err: `malformed constraint "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.args...)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseWithWarnings(t *testing.T) {
	const cpuCores = `constraint "cpu-cores" is deprecated in favor of "cores"`
	tests := []struct {
		args     []string
		warnings []string
		err      string
	}{
		{args: []string{"cores=2"}},
		{args: []string{"cpu-cores=2"}, warnings: []string{cpuCores}},
		// As Juju's ParseWithAliases: the alias seen before an error is
		// still reported, so that the error has its context.
		{args: []string{"cpu-cores=x"}, warnings: []string{cpuCores}, err: `bad "cores" constraint: must be a non-negative integer`},
		{args: []string{"cpu-cores=2 cpu-cores=3"}, warnings: []string{cpuCores}, err: `bad "cores" constraint: already set`},
		{args: []string{"cpu-cores=2 color=red"}, warnings: []string{cpuCores}, err: `unknown constraint "color"`},
		{args: []string{"cpu-cores=2 junk"}, err: `malformed constraint "junk"`},
	}
	for _, tt := range tests {
		_, warnings, err := ParseWithWarnings(tt.args...)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
			t.Fatalf("%v: error %v, want %q", tt.args, err, tt.err)
		}
		if !slices.Equal(warnings, tt.warnings) {
			t.Errorf("%v: warnings %q, want %q", tt.args, warnings, tt.warnings)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"empty", Value{}, ""},
		{"8G as MB", Value{Cores: u64(4), Mem: u64(8192)}, "cores=4 mem=8192M"},
		{"explicitly empty", Value{Mem: u64(0), Cores: u64(0), Arch: str(""), Tags: list()}, "arch= cores= mem= tags="},
		{"bool false", Value{AllocatePublicIP: boolp(false)}, "allocate-public-ip=false"},
		{"escaped", Value{InstanceType: str("a b"), Tags: list("x y", "z")}, `instance-type=a\ b tags=x\ y,z`},
		{"full order", Value{
			Arch:             str("amd64"),
			Container:        str("lxd"),
			Cores:            u64(2),
			CpuPower:         u64(100),
			InstanceRole:     str("auto"),
			InstanceType:     str("m5.large"),
			Mem:              u64(1024),
			RootDisk:         u64(10240),
			RootDiskSource:   str("ssd"),
			Tags:             list("a", "^b"),
			Spaces:           list("alpha", "^beta"),
			VirtType:         str("kvm"),
			Zones:            list("z1", "z2"),
			AllocatePublicIP: boolp(true),
			ImageID:          str("img"),
		}, "arch=amd64 container=lxd cores=2 cpu-power=100 instance-role=auto instance-type=m5.large mem=1024M root-disk=10240M root-disk-source=ssd tags=a,^b spaces=alpha,^beta virt-type=kvm zones=z1,z2 allocate-public-ip=true image-id=img"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.String(); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []string{
		"",
		"mem=8G cores=4",
		"mem=1.5G",
		"mem= cores= arch= container= tags= spaces= zones=",
		`tags=a\ b,c instance-type=big\ one image-id=x\ \ y`,
		"arch=s390x container=none cpu-power=9 instance-role=auto root-disk=1T root-disk-source=volume spaces=a,^b virt-type=virtual-machine zones=z allocate-public-ip=false image-id=ami",
		"cpu-cores=3",
		"allocate-public-ip=true instance-type=x",
	}
	for _, in := range tests {
		v, err := Parse(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		out := v.String()
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("%q -> %q: %v", in, out, err)
		}
		if !reflect.DeepEqual(v, v2) {
			t.Errorf("%q -> %q -> %q", in, out, v2)
		}
		if v2.String() != out {
			t.Errorf("%q: second print %q differs from %q", in, v2.String(), out)
		}
	}
}

func TestIsEmptyKeysWithout(t *testing.T) {
	tests := []struct {
		in    string
		empty bool
		keys  []string
	}{
		{"", true, nil},
		{"mem=", false, []string{"mem"}},
		{"allocate-public-ip=", true, nil},
		{"zones=a mem=1 arch=amd64", false, []string{"arch", "mem", "zones"}},
	}
	for _, tt := range tests {
		v, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if v.IsEmpty() != tt.empty || v.HasAny() == tt.empty {
			t.Errorf("%q: IsEmpty = %v, HasAny = %v", tt.in, v.IsEmpty(), v.HasAny())
		}
		if !slices.Equal(v.Keys(), tt.keys) {
			t.Errorf("%q: Keys = %v, want %v", tt.in, v.Keys(), tt.keys)
		}
		if w := v.Without(tt.keys...); !w.IsEmpty() {
			t.Errorf("%q: Without(all) = %q", tt.in, w)
		}
	}
	v, _ := Parse("mem=1 cores=2")
	if got := v.Without("mem", "bogus").String(); got != "cores=2" {
		t.Errorf("Without(mem) = %q", got)
	}
	if v.String() != "cores=2 mem=1M" {
		t.Errorf("Without changed its receiver: %q", v)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		in  string
		err string
	}{
		{"", ""},
		{"mem=4G cores=2 cpu-power=100", ""},
		{"instance-type=m5.large arch=amd64 root-disk=10G", ""},
		{"instance-type=m5.large mem=4G", `ambiguous constraints: "instance-type" overlaps with "mem"`},
		{"instance-type=m5.large cores=2", `ambiguous constraints: "instance-type" overlaps with "cores"`},
		{"instance-type=m5.large cpu-power=10", `ambiguous constraints: "instance-type" overlaps with "cpu-power"`},
		{"instance-type=m5.large mem=4G cores=2", `ambiguous constraints: "instance-type" overlaps with "cores"`},
		{"instance-type= mem=", `ambiguous constraints: "instance-type" overlaps with "mem"`},
	}
	for _, tt := range tests {
		v, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		err = Validate(v)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%q: unexpected error %v", tt.in, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.err {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.err)
		}
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name     string
		fallback string
		cons     string
		want     string
	}{
		{"both empty", "", "", ""},
		{"fallback only", "mem=2G arch=amd64", "", "arch=amd64 mem=2048M"},
		{"cons only", "", "cores=2", "cores=2"},
		{"cons wins", "mem=2G", "mem=3G", "mem=3072M"},
		{"fills unset", "mem=2G arch=amd64 tags=a", "cores=4", "arch=amd64 cores=4 mem=2048M tags=a"},
		{"explicit empty wins", "mem=2G tags=a,b", "mem= tags=", "mem= tags="},
		{"instance-type drops mem cores cpu-power", "mem=2G cores=2 cpu-power=10 arch=amd64", "instance-type=m5.large",
			"arch=amd64 instance-type=m5.large"},
		{"mem drops instance-type", "instance-type=m5.large zones=z", "mem=4G", "mem=4096M zones=z"},
		{"cores drops instance-type", "instance-type=m5.large", "cores=8", "cores=8"},
		{"cpu-power drops instance-type", "instance-type=m5.large", "cpu-power=8", "cpu-power=8"},
		{"explicitly empty mem still conflicts", "instance-type=m5.large", "mem=", "mem="},
		{"no conflict keeps both", "instance-type=m5.large", "root-disk=8G", "instance-type=m5.large root-disk=8192M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb, err := Parse(tt.fallback)
			if err != nil {
				t.Fatal(err)
			}
			cons, err := Parse(tt.cons)
			if err != nil {
				t.Fatal(err)
			}
			fbBefore, consBefore := fb.String(), cons.String()
			got := Merge(fb, cons)
			if got.String() != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if err := Validate(got); err != nil {
				t.Fatalf("merged value not valid: %v", err)
			}
			if fb.String() != fbBefore || cons.String() != consBefore {
				t.Fatalf("Merge changed its inputs")
			}
		})
	}
}

// Merged values are stored per unit (L-C2), so they must not share
// storage with the model or application value.
func TestMergeDoesNotAlias(t *testing.T) {
	fb, _ := Parse("tags=a,b")
	got := Merge(fb, Value{})
	(*got.Tags)[0] = "changed"
	if (*fb.Tags)[0] != "a" {
		t.Fatalf("merged value shares storage with fallback")
	}
}

func TestJSON(t *testing.T) {
	// Keys in Juju's field order: tags comes before instance-role.
	v, _ := Parse("mem=4G cores= instance-type=x instance-role=r tags=a")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cores":0,"mem":4096,"tags":["a"],"instance-role":"r","instance-type":"x"}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var back Value
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("got %q, want %q", back, v)
	}
}

// TestParseAsJuju holds the cases of Juju 3.6's own parser tests
// (core/constraints), restated: each input is accepted or refused as Juju
// does, with its message, and an accepted value survives String and Parse.
func TestParseAsJuju(t *testing.T) {
	const (
		badSize = "must be a non-negative float with optional M/G/T/P suffix"
		badUint = "must be a non-negative integer"
	)
	tests := []struct {
		args []string
		err  string
	}{
		{args: nil},
		{args: []string{"     "}},
		{args: []string{"cheese"}, err: `malformed constraint "cheese"`},
		{args: []string{"=cheese"}, err: `malformed constraint "=cheese"`},
		{args: []string{"cheese=edam"}, err: `unknown constraint "cheese"`},

		{args: []string{"container="}},
		{args: []string{"container=none"}},
		{args: []string{"container=lxd"}},
		{args: []string{"container=foo"}, err: `bad "container" constraint: invalid container type "foo"`},
		{args: []string{"container=lxd container=lxd"}, err: `bad "container" constraint: already set`},
		{args: []string{"container=lxd", "container="}, err: `bad "container" constraint: already set`},

		{args: []string{"arch="}},
		{args: []string{"arch=amd64"}},
		{args: []string{"arch=arm64"}},
		{args: []string{"arch=cheese"}, err: `bad "arch" constraint: "cheese" not recognized`},
		{args: []string{"arch=123.45"}, err: `bad "arch" constraint: "123.45" not recognized`},
		{args: []string{"arch=amd64 arch=amd64"}, err: `bad "arch" constraint: already set`},
		{args: []string{"arch=arm64", "arch="}, err: `bad "arch" constraint: already set`},

		{args: []string{"cores="}},
		{args: []string{"cores=0"}},
		{args: []string{"cores=4"}},
		{args: []string{"cores=cheese"}, err: `bad "cores" constraint: ` + badUint},
		{args: []string{"cores=-1"}, err: `bad "cores" constraint: ` + badUint},
		{args: []string{"cores=123.45"}, err: `bad "cores" constraint: ` + badUint},
		{args: []string{"cores=128 cores=1"}, err: `bad "cores" constraint: already set`},
		{args: []string{"cores=128", "cores=1"}, err: `bad "cores" constraint: already set`},
		{args: []string{"cpu-cores=4"}},

		{args: []string{"cpu-power="}},
		{args: []string{"cpu-power=0"}},
		{args: []string{"cpu-power=44"}},
		{args: []string{"cpu-power=cheese"}, err: `bad "cpu-power" constraint: ` + badUint},
		{args: []string{"cpu-power=-1"}, err: `bad "cpu-power" constraint: ` + badUint},
		{args: []string{"  cpu-power=300 cpu-power=1700 "}, err: `bad "cpu-power" constraint: already set`},
		{args: []string{"cpu-power=300  ", "  cpu-power=1700"}, err: `bad "cpu-power" constraint: already set`},

		{args: []string{"mem="}},
		{args: []string{"mem=0"}},
		{args: []string{"mem=512"}},
		{args: []string{"mem=512M"}},
		{args: []string{"mem=1.5G"}},
		{args: []string{"mem=36.2T"}},
		{args: []string{"mem=18.9P"}},
		{args: []string{"mem=cheese"}, err: `bad "mem" constraint: ` + badSize},
		{args: []string{"mem=-1"}, err: `bad "mem" constraint: ` + badSize},
		{args: []string{"mem=32Y"}, err: `bad "mem" constraint: ` + badSize},
		{args: []string{"mem=1G  mem=2G"}, err: `bad "mem" constraint: already set`},
		{args: []string{"mem=1G", "mem=2G"}, err: `bad "mem" constraint: already set`},

		{args: []string{"root-disk="}},
		{args: []string{"root-disk=0"}},
		{args: []string{"root-disk=512"}},
		{args: []string{"root-disk=512M"}},
		{args: []string{"root-disk=1.5G"}},
		{args: []string{"root-disk=36.2T"}},
		{args: []string{"root-disk=18.9P"}},
		{args: []string{"root-disk=cheese"}, err: `bad "root-disk" constraint: ` + badSize},
		{args: []string{"root-disk=-1"}, err: `bad "root-disk" constraint: ` + badSize},
		{args: []string{"root-disk=32Y"}, err: `bad "root-disk" constraint: ` + badSize},
		{args: []string{"root-disk=1G  root-disk=2G"}, err: `bad "root-disk" constraint: already set`},
		{args: []string{"root-disk=1G", "root-disk=2G"}, err: `bad "root-disk" constraint: already set`},

		{args: []string{"root-disk-source="}},
		{args: []string{"root-disk-source=sourcename"}},
		{args: []string{"root-disk-source=sourcename root-disk-source=somethingelse"}, err: `bad "root-disk-source" constraint: already set`},
		{args: []string{"root-disk-source=sourcename", "root-disk-source=somethingelse"}, err: `bad "root-disk-source" constraint: already set`},

		{args: []string{"tags=foo"}},
		{args: []string{"tags=foo,bar"}},
		{args: []string{"tags="}},

		{args: []string{"spaces=space1"}},
		{args: []string{"spaces=space1,space2"}},
		{args: []string{"spaces=^dmz,^public"}},
		{args: []string{"spaces=admin,^area52,dmz,^public"}},
		{args: []string{"spaces="}},

		{args: []string{"instance-role=foobarir"}},
		{args: []string{"instance-role="}},
		{args: []string{"instance-role=auto"}},

		{args: []string{"instance-type=foo"}},
		{args: []string{"instance-type="}},
		{args: []string{`instance-type=something\ with\ spaces`}},

		{args: []string{"virt-type="}},
		{args: []string{"virt-type=kvm"}},
		{args: []string{"virt-type=lxd"}},
		{args: []string{"virt-type=kvm virt-type=kvm"}, err: `bad "virt-type" constraint: already set`},
		{args: []string{"virt-type=kvm", "virt-type="}, err: `bad "virt-type" constraint: already set`},

		{args: []string{"zones=az1"}},
		{args: []string{"zones=az1,az2"}},
		{args: []string{`zones=Availability\ zone\ 1`}},
		{args: []string{`zones=Availability\ zone\ 1,Availability\ zone\ 2,az2`}},
		{args: []string{"zones="}},

		{args: []string{"allocate-public-ip=true"}},
		{args: []string{"allocate-public-ip=fred"}, err: `bad "allocate-public-ip" constraint: must be 'true' or 'false'`},
		{args: []string{"allocate-public-ip=true allocate-public-ip=false"}, err: `bad "allocate-public-ip" constraint: already set`},

		{args: []string{"image-id=ubuntu-bf2"}},
		{args: []string{"image-id="}},
		{args: []string{"image-id=ubuntu-bf2 image-id=ubuntu-bf1"}, err: `bad "image-id" constraint: already set`},

		// Everything at once, instance-type with cores and mem included:
		// conflicts are not the parser's business.
		{args: []string{
			"root-disk=8G mem=2T  arch=arm64  cores=4096 cpu-power=9001 container=lxd " +
				"tags=foo,bar spaces=space1,^space2 instance-type=foo instance-role=foo1",
			"virt-type=kvm zones=az1,az2 allocate-public-ip=true root-disk-source=sourcename image-id=ubuntu-bf2"}},
		{args: []string{
			"root-disk=8G", "mem=2T", "cores=4096", "cpu-power=9001", "arch=arm64",
			"container=lxd", "tags=foo,bar", "spaces=space1,^space2",
			"instance-type=foo", "virt-type=kvm", "zones=az1,az2", "allocate-public-ip=false",
			"instance-role=foo2"}},
		{args: []string{
			`root-disk=8G mem=2T  arch=arm64  cores=4096 zones=Availability\ zone\ 1 cpu-power=9001 container=lxd ` +
				"tags=foo,bar spaces=space1,^space2 instance-type=foo instance-role=foo3",
			"virt-type=kvm"}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.args...)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: got error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", tt.args, err)
			continue
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%q: round trip through %q gave %q, %v", tt.args, got.String(), again, err)
		}
	}
}

func TestParseKitchenSink(t *testing.T) {
	got, err := Parse(
		`root-disk=8G mem=2T  arch=arm64  cores=4096 zones=Availability\ zone\ 1 cpu-power=9001 container=lxd `+
			"tags=foo,bar spaces=space1,^space2 instance-type=foo instance-role=foo3",
		"virt-type=kvm allocate-public-ip=false root-disk-source=src image-id=ubuntu-bf2")
	if err != nil {
		t.Fatal(err)
	}
	want := Value{
		Arch: str("arm64"), Container: str("lxd"), Cores: u64(4096), CpuPower: u64(9001),
		Mem: u64(2 * 1024 * 1024), RootDisk: u64(8192), RootDiskSource: str("src"),
		Tags: list("foo", "bar"), Spaces: list("space1", "^space2"), InstanceRole: str("foo3"),
		InstanceType: str("foo"), VirtType: str("kvm"), Zones: list("Availability zone 1"),
		AllocatePublicIP: boolp(false), ImageID: str("ubuntu-bf2"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestInvalidSpaceNames(t *testing.T) {
	for _, name := range []string{
		"%$pace", "^foo#2", "+", "tcp:ip", "^^myspace", "^^^^^^^^", "space^x",
		"&-foo", "space/3", "^bar=4", "&#!", "-a", "a-", "a--b", "A",
	} {
		got, err := Parse("spaces=" + name)
		want := `bad "spaces" constraint: "` + strings.TrimPrefix(name, "^") + `" is not a valid space name`
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", name, err, want)
		}
		if !got.IsEmpty() {
			t.Errorf("%q: a refused value is not empty: %q", name, got)
		}
	}
}

// TestRoundTripFormats checks that every value survives its printed
// form, JSON and YAML (the formats of juju constraints), explicitly empty
// values included.
func TestRoundTripFormats(t *testing.T) {
	values := []Value{
		{},
		{Arch: str("")}, {Arch: str("amd64")},
		{Container: str("")}, {Container: str("lxd")},
		{Cores: u64(0)}, {Cores: u64(128)},
		{CpuPower: u64(0)}, {CpuPower: u64(250)},
		{Mem: u64(0)}, {Mem: u64(98765)},
		{RootDisk: u64(0)}, {RootDisk: u64(109876)},
		{RootDiskSource: str("")}, {RootDiskSource: str("identikit")},
		{Tags: list()}, {Tags: list("foo", "bar")}, {Tags: list("a", "", "b")},
		{Spaces: list()}, {Spaces: list("space1", "^space2")},
		{InstanceRole: str("")}, {InstanceRole: str("foo")},
		{InstanceType: str("")}, {InstanceType: str("foo")}, {InstanceType: str("with spaces")},
		{Zones: list()}, {Zones: list("az1", "az2")},
		{AllocatePublicIP: boolp(true)}, {AllocatePublicIP: boolp(false)},
		{ImageID: str("")}, {ImageID: str("ubuntu-bf2")},
		{
			Arch: str("arm64"), Container: str("lxd"), Cores: u64(4096), CpuPower: u64(9001),
			Mem: u64(18000000000), RootDisk: u64(24000000000), RootDiskSource: str("cave"),
			Tags: list("foo", "bar"), Spaces: list("space1", "^space2"), InstanceType: str("foo"),
			Zones: list("az1", "az2"), AllocatePublicIP: boolp(true), ImageID: str("ubuntu-bf2"),
		},
	}
	for _, v := range values {
		got, err := Parse(v.String())
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("string %q: got %q, %v", v.String(), got, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got = Value{}
		if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("json %s: got %q, %v", b, got, err)
		}
		y, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got = Value{}
		if err := yaml.Unmarshal(y, &got); err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("yaml %s: got %q, %v", y, got, err)
		}
	}
}

func TestWithoutAsJuju(t *testing.T) {
	const initial = "root-disk=8G mem=4G arch=amd64 cpu-power=1000 cores=4 spaces=space1,^space2 tags=foo " +
		"container=lxd instance-type=bar zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"
	tests := []struct {
		without []string
		want    string
	}{
		{[]string{"root-disk"}, "mem=4G arch=amd64 cpu-power=1000 cores=4 tags=foo spaces=space1,^space2 container=lxd instance-type=bar zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"},
		{[]string{"mem"}, "root-disk=8G arch=amd64 cpu-power=1000 cores=4 tags=foo spaces=space1,^space2 container=lxd instance-type=bar zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"},
		{[]string{"instance-type"}, "root-disk=8G mem=4G arch=amd64 cpu-power=1000 cores=4 tags=foo spaces=space1,^space2 container=lxd zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"},
		{[]string{"root-disk", "mem", "arch"}, "cpu-power=1000 cores=4 tags=foo spaces=space1,^space2 container=lxd instance-type=bar zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"},
		{[]string{"allocate-public-ip"}, "root-disk=8G mem=4G arch=amd64 cpu-power=1000 cores=4 spaces=space1,^space2 tags=foo container=lxd instance-type=bar zones=az1,az2 image-id=ubuntu-bf2"},
		{[]string{"cpu-cores"}, "root-disk=8G mem=4G arch=amd64 cpu-power=1000 spaces=space1,^space2 tags=foo container=lxd instance-type=bar zones=az1,az2 allocate-public-ip=true image-id=ubuntu-bf2"},
	}
	v, err := Parse(initial)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		want, err := Parse(tt.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Without(tt.without...); !reflect.DeepEqual(got, want) {
			t.Errorf("Without(%v) = %q, want %q", tt.without, got, want)
		}
	}
}
