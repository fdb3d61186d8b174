package cmdutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jujuclone/juju/output"
)

// The CLI checks constraints as Juju's parser does and nothing more:
// conflicts such as instance-type with mem are the provider's business.
func TestParseConstraints(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		want   string
		stderr string
		err    string
	}{
		{name: "none", args: nil, want: ""},
		{name: "joined flags", args: []string{"mem=8G", "cores=4"}, want: "cores=4 mem=8192M"},
		{name: "instance-type with cores and mem", args: []string{"instance-type=m5.large cores=2 mem=4G"},
			want: "cores=2 instance-type=m5.large mem=4096M"},
		{name: "empty allocate-public-ip stores nothing", args: []string{"allocate-public-ip="}, want: ""},
		{name: "alias warns as Juju", args: []string{"cpu-cores=2"}, want: "cores=2",
			stderr: "Warning: constraint \"cpu-cores\" is deprecated in favor of \"cores\".\n"},
		{name: "alias warns before a later error", args: []string{"cpu-cores=2", "mem=lots"},
			stderr: "Warning: constraint \"cpu-cores\" is deprecated in favor of \"cores\".\n",
			err:    `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "bad container", args: []string{"container=foo"}, err: `bad "container" constraint: invalid container type "foo"`},
		{name: "malformed", args: []string{"foo"}, err: `malformed constraint "foo"`},
		{name: "twice across flags", args: []string{"mem=1G", "mem=2G"}, err: `bad "mem" constraint: already set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			v, err := ParseConstraints(&stderr, tt.args...)
			if stderr.String() != tt.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
			if tt.err != "" {
				var fe *FlagError
				if err == nil || err.Error() != tt.err || !errors.As(err, &fe) {
					t.Fatalf("got error %v, want usage error %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.String() != tt.want {
				t.Errorf("got %q, want %q", v.String(), tt.want)
			}
		})
	}
}

func TestParseBaseFlags(t *testing.T) {
	const deprecated = "WARNING series flag is deprecated, use --base instead\n"
	tests := []struct {
		name, series, base string
		want, stderr, err  string
	}{
		{name: "none"},
		{name: "base keeps its risk", base: "ubuntu@22.04/edge", want: "ubuntu@22.04/edge"},
		{name: "base without risk is stable", base: "ubuntu@22.04", want: "ubuntu@22.04/stable"},
		{name: "branch refused", base: "ubuntu@22.04/edge/foo", err: `channel is malformed and has too many components "22.04/edge/foo"`},
		{name: "bad risk", base: "ubuntu@22.04/daily", err: `risk in channel "22.04/daily" not valid`},
		{name: "no os", base: "jammy", err: "expected base string to contain os and channel separated by '@'"},
		{name: "old series", series: "precise", want: "ubuntu@12.04/stable", stderr: deprecated},
		{name: "zesty", series: "zesty", want: "ubuntu@17.04/stable", stderr: deprecated},
		{name: "eoan", series: "eoan", want: "ubuntu@19.10/stable", stderr: deprecated},
		{name: "centos", series: "centos7", want: "centos@7/stable", stderr: deprecated},
		{name: "unknown series", series: "foo", stderr: deprecated, err: `attempting to convert "foo" to a base: series "foo" not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			b, err := ParseBaseFlags(&stderr, tt.series, tt.base)
			if stderr.String() != tt.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// juju constraints prints Juju's canonical form: a line, or the set keys in Juju's order.
func TestWriteConstraints(t *testing.T) {
	const cons = "arch=amd64 cores=2 mem=4096M tags=a,,b instance-type=x zones= image-id=i\\ d"
	tests := []struct {
		f    output.Format
		in   string
		want string
	}{
		{ConstraintsFormat, cons, "arch=amd64 cores=2 instance-type=x mem=4096M tags=a,,b zones= image-id=i\\ d\n"},
		{ConstraintsFormat, "", "\n"},
		{output.JSON, cons, `{"arch":"amd64","cores":2,"mem":4096,"tags":["a","","b"],"instance-type":"x","zones":[],"image-id":"i d"}` + "\n"},
		{output.JSON, "", "{}\n"},
		{output.YAML, "mem=1G instance-role=r tags=t", "mem: 1024\ntags:\n- t\ninstance-role: r\n"},
		{output.YAML, "", "{}\n"},
	}
	for _, tt := range tests {
		s, out, _ := output.TestStreams()
		if err := WriteConstraints(s, "", tt.f, tt.in); err != nil {
			t.Fatalf("%s %q: %v", tt.f, tt.in, err)
		}
		if out.String() != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.f, tt.in, out.String(), tt.want)
		}
	}
	path := filepath.Join(t.TempDir(), "cons")
	s, out, _ := output.TestStreams()
	if err := WriteConstraints(s, path, ConstraintsFormat, "mem=2G"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "mem=2048M\n" || out.Len() != 0 {
		t.Errorf("file %q, %v; stdout %q", data, err, out.String())
	}
	if err := WriteConstraints(s, "", ConstraintsFormat, "mem=lots"); err == nil {
		t.Error("bad constraints from the controller were printed")
	}
}
