package modelconfig

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/core/version"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		err    string
	}{
		{nil, ""},
		{map[string]string{"update-status-hook-interval": "5m"}, ""},
		{map[string]string{"update-status-hook-interval": "1s"}, ""},
		{map[string]string{"update-status-hook-interval": "60m"}, ""},
		{map[string]string{"update-status-hook-interval": "61m"}, "update status hook frequency 1h1m0s cannot be greater than 60m"},
		{map[string]string{"update-status-hook-interval": "500ms"}, "update status hook frequency 500ms cannot be less than 1s"},
		{map[string]string{"update-status-hook-interval": "soon"}, `invalid update status hook interval in model configuration: time: invalid duration "soon"`},
		{map[string]string{"no-such-key": "x"}, `key "no-such-key" is not defined in the current model configuration: possible misspelling`},
		{map[string]string{"automatically-retry-hooks": "maybe"}, `automatically-retry-hooks: expected bool, got string("maybe")`},
		{map[string]string{"automatically-retry-hooks": "TRUE"}, ""},
		{map[string]string{"default-base": "ubuntu@22.04"}, ""},
		{map[string]string{"default-base": "ubuntu"}, `invalid default base "ubuntu": expected base string to contain os and channel separated by '@'`},
		{map[string]string{"default-base": "ubuntu@18.04"}, `base "ubuntu@18.04" not supported`},
		{map[string]string{"logging-config": "<root>=INFO;unit=DEBUG"}, ""},
		{map[string]string{"logging-config": "foo;bar"}, `logger specification expected '=', found "foo"`},
		{map[string]string{"logging-config": "foo=loud"}, `unknown severity level "loud"`},
		{map[string]string{"agent-version": "3.6.1"}, `"agent-version" cannot be set: it is the Juju version this controller implements (` + version.Juju + `)`},
		{map[string]string{"http-proxy": "http://p:3128", "juju-https-proxy": "http://p:3128"}, "cannot specify both legacy proxy values and juju proxy values"},
		{map[string]string{"juju-http-proxy": "http://p:3128", "juju-no-proxy": "10.0.0.0/8"}, ""},
		{map[string]string{"image-stream": "daily", "extra-info": "ci"}, ""},
	} {
		err := Validate(tc.config)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Validate(%v) = %v, want %q", tc.config, err, tc.err)
		}
	}
}

func TestApplyCanonicalValuesAndReset(t *testing.T) {
	current := map[string]string{"update-status-hook-interval": "10s", "extra-info": "x"}
	got, err := Apply(current, map[string]string{"automatically-retry-hooks": "T", "default-base": "ubuntu@22.04/stable"}, []string{"extra-info"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"update-status-hook-interval": "10s", "automatically-retry-hooks": "true", "default-base": "ubuntu@22.04"}
	if !maps.Equal(got, want) {
		t.Errorf("Apply = %v, want %v", got, want)
	}
	if current["extra-info"] != "x" {
		t.Error("Apply changed its input")
	}
	for _, tc := range []struct {
		set   map[string]string
		reset []string
		err   string
	}{
		{nil, []string{"agent-version"}, `"agent-version" cannot be reset`},
		{nil, []string{"nope"}, `key "nope" is not defined in the current model configuration: possible misspelling`},
		{map[string]string{"extra-info": "y"}, []string{"extra-info"}, `cannot set and reset key "extra-info" simultaneously`},
	} {
		if _, err := Apply(current, tc.set, tc.reset); err == nil || err.Error() != tc.err {
			t.Errorf("Apply(%v, %v) = %v, want %q", tc.set, tc.reset, err, tc.err)
		}
	}
}

func TestValuesDefaultsAndSources(t *testing.T) {
	vals := Values(map[string]string{"automatically-retry-hooks": "false", "extra-info": "ctl"}, map[string]string{"automatically-retry-hooks": "true"})
	byName := map[string]Value{}
	for _, v := range vals {
		byName[v.Key.Name] = v
	}
	if !slices.Equal(slices.Sorted(maps.Keys(byName)), Keys()) {
		t.Errorf("Values lists %v, Keys %v", slices.Sorted(maps.Keys(byName)), Keys())
	}
	for _, tc := range []struct {
		key    string
		typed  any
		source string
	}{
		{"automatically-retry-hooks", true, "model"},
		{"extra-info", "ctl", "controller"},
		{"enable-os-upgrade", true, "default"},
		{"update-status-hook-interval", "5m", "default"},
		{"logging-config", "<root>=INFO", "default"},
		{"agent-version", version.Juju, "model"},
		{"default-base", "", "default"},
		{"juju-no-proxy", "127.0.0.1,localhost,::1", "default"},
	} {
		v := byName[tc.key]
		if v.Typed() != tc.typed || v.Source != tc.source {
			t.Errorf("%s = %#v from %s, want %#v from %s", tc.key, v.Typed(), v.Source, tc.typed, tc.source)
		}
	}
}

func TestEveryKeyIsDescribed(t *testing.T) {
	for _, name := range Keys() {
		k, _ := Lookup(name)
		if k.Name != name || k.Description == "" || (k.Type != TypeString && k.Type != TypeBool) {
			t.Errorf("%s: %+v", name, k)
		}
		if k.Type == TypeBool && k.Default != "true" && k.Default != "false" {
			t.Errorf("%s: bool default %q", name, k.Default)
		}
	}
}

func TestUpdateStatusInterval(t *testing.T) {
	if got := UpdateStatusInterval(nil); got != 5*time.Minute {
		t.Errorf("default = %s", got)
	}
	if got := UpdateStatusInterval(map[string]string{"update-status-hook-interval": "2s"}); got != 2*time.Second {
		t.Errorf("2s = %s", got)
	}
}

func TestRetryHooks(t *testing.T) {
	if !RetryHooks(nil) {
		t.Error("does not retry by default (Juju's default is true)")
	}
	if RetryHooks(map[string]string{"automatically-retry-hooks": "false"}) {
		t.Error("retries when turned off")
	}
}

// A model's own value wins over the controller's model default; Juju's defaults are not filled in.
func TestInherit(t *testing.T) {
	got := Inherit(map[string]string{"extra-info": "ctl", "automatically-retry-hooks": "false"}, map[string]string{"extra-info": "mine"})
	if want := map[string]string{"extra-info": "mine", "automatically-retry-hooks": "false"}; !maps.Equal(got, want) {
		t.Errorf("Inherit = %v, want %v", got, want)
	}
	if got := Inherit(nil, map[string]string{"a": "b"}); !maps.Equal(got, map[string]string{"a": "b"}) {
		t.Errorf("Inherit without defaults = %v", got)
	}
}

func TestProxyEnv(t *testing.T) {
	env := strings.Join(ProxyEnv(map[string]string{"juju-http-proxy": "http://squid:3128"}), "\n")
	for _, want := range []string{"JUJU_CHARM_HTTP_PROXY=http://squid:3128", "JUJU_CHARM_HTTPS_PROXY=", "JUJU_CHARM_NO_PROXY=127.0.0.1,localhost,::1"} {
		if !slices.Contains(strings.Split(env, "\n"), want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "http_proxy=") || strings.Contains(env, "no_proxy=") {
		t.Errorf("legacy variables set without a legacy proxy:\n%s", env)
	}
	env = strings.Join(ProxyEnv(map[string]string{"http-proxy": "http://p"}), "\n")
	if !strings.Contains(env, "\nhttp_proxy=http://p\nHTTP_PROXY=http://p\nno_proxy=127.0.0.1,localhost,::1\nNO_PROXY=127.0.0.1,localhost,::1") {
		t.Errorf("legacy proxy missing:\n%s", env)
	}
}

func TestLoggingConfig(t *testing.T) {
	l, err := ParseLoggingConfig("<root>=INFO; unit=DEBUG : juju.worker=error")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		module string
		level  Level
		want   bool
	}{
		{"unit.mysql/0.juju-log", Debug, true},
		{"unit.mysql/0.juju-log", Trace, false},
		{"juju.worker.uniter", Info, false},
		{"juju.worker.uniter", Error, true},
		{"juju.apiserver", Info, true},
		{"juju.apiserver", Debug, false},
	} {
		if got := l.Enabled(tc.module, tc.level); got != tc.want {
			t.Errorf("Enabled(%s, %d) = %v", tc.module, tc.level, got)
		}
	}
	root, err := ParseLoggingConfig("debug")
	if err != nil || !root.Enabled("anything", Debug) || root.Enabled("anything", Trace) {
		t.Errorf("a level alone: %v %v", root, err)
	}
	if none, _ := ParseLoggingConfig(""); none.Enabled("x", Info) || !none.Enabled("x", Warning) {
		t.Error("empty config is not loggo's WARNING")
	}
	for spec, want := range map[string]string{
		"=foo":        `logger specification "=foo" has blank name or level`,
		"foo=":        `logger specification "foo=" has blank name or level`,
		"foo=unknown": `unknown severity level "unknown"`,
	} {
		if _, err := ParseLoggingConfig(spec); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"5G": 5 << 30, "512": 512 << 20, "1.5G": 1536 << 20, "2T": 2 << 40, "0": 0, "10MiB": 10 << 20, "3gb": 3 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1G", "G", "5X", "NaN", "9999999999999999P"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	if age, size := ActionResultsLimits(nil); age != 336*time.Hour || size != 5<<30 {
		t.Errorf("defaults: %v %d", age, size)
	}
	if _, err := Apply(nil, map[string]string{"max-action-results-age": "soon"}, nil); err == nil {
		t.Error("a bad age accepted")
	}
}

// Effective gives what Values shows, as a map: every key, set or default, and this
// controller's agent version whatever is stored.
func TestEffectiveIsValuesAsAMap(t *testing.T) {
	config := map[string]string{"update-status-hook-interval": "10m", AgentVersion: "1.0.0"}
	got := Effective(config)
	values := Values(nil, config)
	if len(got) != len(values) {
		t.Fatalf("Effective has %d keys, Values %d", len(got), len(values))
	}
	for _, v := range values {
		if got[v.Key.Name] != v.Value {
			t.Errorf("Effective[%q] = %q, Values says %q", v.Key.Name, got[v.Key.Name], v.Value)
		}
	}
}
