package constraints

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
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
		{name: "tags drop empty items", args: []string{"tags=a,,b,"}, want: Value{Tags: list("a", "b")}},
		{name: "spaces", args: []string{"spaces=alpha,^db-2"}, want: Value{Spaces: list("alpha", "^db-2")}},
		{name: "zones", args: []string{"zones=us-east-1a,us-east-1b"}, want: Value{Zones: list("us-east-1a", "us-east-1b")}},
		{name: "allocate-public-ip", args: []string{"allocate-public-ip=true"}, want: Value{AllocatePublicIP: boolp(true)}},
		{name: "allocate-public-ip false", args: []string{"allocate-public-ip=false"}, want: Value{AllocatePublicIP: boolp(false)}},
		{name: "allocate-public-ip empty", args: []string{"allocate-public-ip="}, want: Value{AllocatePublicIP: boolp(false)}},
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
		{name: "bad container", args: []string{"container=x"}, err: `bad "container" constraint: "x" not recognized`},
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
	tests := []struct {
		args     []string
		warnings []string
	}{
		{[]string{"cores=2"}, nil},
		{[]string{"cpu-cores=2"}, []string{`constraint "cpu-cores" is deprecated in favor of "cores"`}},
	}
	for _, tt := range tests {
		_, warnings, err := ParseWithWarnings(tt.args...)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
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
	v, _ := Parse("mem=4G cores= instance-type=x")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cores":0,"mem":4096,"instance-type":"x"}`
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
