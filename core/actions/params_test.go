package actions

import (
	"encoding/json"
	"testing"
)

func TestParseArg(t *testing.T) {
	for _, tc := range []struct {
		in, keys, value, err string
	}{
		{in: "out=out.tar.bz2", keys: "out", value: "out.tar.bz2"},
		{in: "file.kind=xz", keys: "file kind", value: "xz"},
		{in: "a=b=c", keys: "a", value: "b=c"},
		{in: "empty=", keys: "empty", value: ""},
		{in: "level2-key=1", keys: "level2-key", value: "1"},
		{in: "novalue", err: `argument "novalue" must be of the form key.key.key...=value`},
		{in: "Bad=1", err: `key "Bad" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric and hyphens`},
		{in: "a..b=1", err: `key "" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric and hyphens`},
		{in: "a-=1", err: `key "a-" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric and hyphens`},
	} {
		a, err := ParseArg(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseArg(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArg(%q): %v", tc.in, err)
			continue
		}
		if got := join(a.Keys); got != tc.keys || a.Value != tc.value {
			t.Errorf("ParseArg(%q) = %q %q, want %q %q", tc.in, got, a.Value, tc.keys, tc.value)
		}
	}
}

func join(keys []string) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += k
	}
	return s
}

func mustArgs(t *testing.T, in ...string) []Arg {
	t.Helper()
	var out []Arg
	for _, s := range in {
		a, err := ParseArg(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func TestBuildParams(t *testing.T) {
	file := []byte("out: from-file\nfile:\n  kind: gz\n  level: 3\nlist: [1, {a: b}]\n")
	for _, tc := range []struct {
		name string
		file []byte
		args []string
		raw  bool
		want string
	}{
		{name: "yaml values", args: []string{"time=1000", "flag=y", "off=off", "f=1.5", "s=hello", "n=~", "e="},
			want: `{"e":"","f":1.5,"flag":true,"n":null,"off":false,"s":"hello","time":1000}`},
		{name: "string args", args: []string{"time=1000", "flag=y"}, raw: true, want: `{"flag":"y","time":"1000"}`},
		{name: "nesting merges", args: []string{"file.kind=xz", "file.quality=high", "a.b.c=1"},
			want: `{"a":{"b":{"c":1}},"file":{"kind":"xz","quality":"high"}}`},
		{name: "a scalar becomes a map", args: []string{"a=1", "a.b=2"}, want: `{"a":{"b":2}}`},
		{name: "args override the file", file: file, args: []string{"out=cli", "file.kind=xz"},
			want: `{"file":{"kind":"xz","level":3},"list":[1,{"a":"b"}],"out":"cli"}`},
		{name: "yaml map value", args: []string{"m={x: 1}"}, want: `{"m":{"x":1}}`},
		{name: "empty file", file: []byte(""), want: `{}`},
		{name: "none", want: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := BuildParams(tc.file, mustArgs(t, tc.args...), tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("params = %s, want %s", b, tc.want)
			}
		})
	}
}

func TestBuildParamsErrors(t *testing.T) {
	for _, tc := range []struct {
		file []byte
		args []string
		want string
	}{
		{file: []byte("- a\n- b\n"), want: "params must contain a YAML map with string keys"},
		{file: []byte("1: a\n"), want: "map keyed with non-string value"},
		{file: []byte("a: [\n"), want: "yaml: line 1: did not find expected node content"},
		{args: []string{"a=[1"}, want: "yaml: line 1: did not find expected ',' or ']'"},
		{args: []string{"a={1: x}"}, want: "map keyed with non-string value"},
	} {
		_, err := BuildParams(tc.file, mustArgs(t, tc.args...), false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("BuildParams(%q, %q) error = %v, want %q", tc.file, tc.args, err, tc.want)
		}
	}
}
