// Package modelconfig defines the model configuration keys this controller knows: Juju 3.6's
// names, types and defaults, how values are checked, and what each key does here. The CLI
// checks with it before anything is sent; the controller checks again before writing.
package modelconfig

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/version"
)

// The keys.
const (
	AgentVersion             = "agent-version"
	AutomaticallyRetryHooks  = "automatically-retry-hooks"
	DefaultBase              = "default-base"
	EnableOSRefreshUpdate    = "enable-os-refresh-update"
	EnableOSUpgrade          = "enable-os-upgrade"
	ExtraInfo                = "extra-info"
	FTPProxy                 = "ftp-proxy"
	HTTPProxy                = "http-proxy"
	HTTPSProxy               = "https-proxy"
	ImageStream              = "image-stream"
	JujuFTPProxy             = "juju-ftp-proxy"
	JujuHTTPProxy            = "juju-http-proxy"
	JujuHTTPSProxy           = "juju-https-proxy"
	JujuNoProxy              = "juju-no-proxy"
	LoggingConfig            = "logging-config"
	MaxActionResultsAge      = "max-action-results-age"
	MaxActionResultsSize     = "max-action-results-size"
	NoProxy                  = "no-proxy"
	UpdateStatusHookInterval = "update-status-hook-interval"
)

// Types of values, as Juju's schema names them (model-config --help, and the JSON type of a
// value: a bool key's value is a JSON boolean).
const (
	TypeString = "string"
	TypeBool   = "bool"
)

// Sources of a value, as model-config shows them.
const (
	SourceDefault    = "default"
	SourceController = "controller"
	SourceModel      = "model"
)

// DefaultUpdateStatusHookInterval is Juju's default.
const DefaultUpdateStatusHookInterval = 5 * time.Minute

// Juju allows 1m to 60m; this controller also accepts intervals down to a second, so that a
// charm's tests need not wait a minute for update-status.
const (
	minUpdateStatusHookInterval = time.Second
	maxUpdateStatusHookInterval = 60 * time.Minute
)

// Key describes one model configuration key.
type Key struct {
	Name string
	// Type is TypeString or TypeBool.
	Type string
	// Default is the value in effect when the model does not set one.
	Default string
	// Description is what the key means in Juju.
	Description string
	// Here says what the key does in this controller, for keys whose effect differs from
	// Juju's or that have none.
	Here string
	// ReadOnly keys are reported but cannot be set or reset.
	ReadOnly bool
	// check validates a value and returns its canonical form.
	check func(value string) (string, error)
}

const noProxyDefault = "127.0.0.1,localhost,::1"

const noMachines = "No effect: a machine of this controller is a directory and an agent on " +
	"this host, with no image, packages or OS of its own; the value is kept and shown."

var keys = map[string]Key{
	AgentVersion: {
		Type: TypeString, ReadOnly: true, Default: version.Juju,
		Description: "The Juju version the model's agents run.",
		Here: "The Juju version whose CLI and hook contract this controller implements (" +
			version.Juju + "); read-only.",
	},
	AutomaticallyRetryHooks: {
		Type: TypeBool, Default: "true", check: checkBool(AutomaticallyRetryHooks),
		Description: "Whether a unit agent retries a failed hook by itself, after 5s, then twice as long " +
			"each time up to 5m, until it succeeds or is resolved.",
	},
	DefaultBase: {
		Type: TypeString, check: checkDefaultBase,
		Description: "The base (os@channel) deploy and add-machine use when none is given, e.g. " +
			"ubuntu@22.04 (deploy refuses a charm that does not list it, unless --force).",
	},
	EnableOSRefreshUpdate: {
		Type: TypeBool, Default: "true", check: checkBool(EnableOSRefreshUpdate), Here: noMachines,
		Description: "Whether new machines update their package lists when they start.",
	},
	EnableOSUpgrade: {
		Type: TypeBool, Default: "true", check: checkBool(EnableOSUpgrade), Here: noMachines,
		Description: "Whether new machines upgrade their packages when they start.",
	},
	ExtraInfo: {
		Type:        TypeString,
		Description: "Free text kept with the model for its users.",
	},
	FTPProxy: {
		Type: TypeString, Description: "The FTP proxy of hooks and actions: ftp_proxy and FTP_PROXY in their environment.",
	},
	HTTPProxy: {
		Type: TypeString, Description: "The HTTP proxy of hooks and actions: http_proxy and HTTP_PROXY in their environment.",
	},
	HTTPSProxy: {
		Type: TypeString, Description: "The HTTPS proxy of hooks and actions: https_proxy and HTTPS_PROXY in their environment.",
	},
	ImageStream: {
		Type: TypeString, Default: "released", Here: noMachines,
		Description: "The simplestreams stream of the OS images new machines start from (released, daily).",
	},
	JujuFTPProxy: {
		Type: TypeString, Description: "The FTP proxy charms are offered: JUJU_CHARM_FTP_PROXY in hooks and actions.",
	},
	JujuHTTPProxy: {
		Type: TypeString, Description: "The HTTP proxy charms are offered: JUJU_CHARM_HTTP_PROXY in hooks and actions.",
	},
	JujuHTTPSProxy: {
		Type: TypeString, Description: "The HTTPS proxy charms are offered: JUJU_CHARM_HTTPS_PROXY in hooks and actions.",
	},
	JujuNoProxy: {
		Type: TypeString, Default: noProxyDefault,
		Description: "The hosts charms should reach without a proxy: JUJU_CHARM_NO_PROXY in hooks and actions.",
	},
	LoggingConfig: {
		Type: TypeString, Default: "<root>=INFO", check: checkLoggingConfig,
		Description: "The level of each logger of the model's agents, e.g. <root>=INFO;unit=DEBUG; what is " +
			"below it is not logged (juju-log messages are the unit.<unit>.juju-log logger, hook " +
			"output unit.<unit>.<hook>, at DEBUG for stdout and WARNING for stderr).",
	},
	MaxActionResultsAge: {
		Type: TypeString, Default: "336h", check: checkActionResultsAge,
		Description: "How long the results of finished actions and exec commands are kept (a duration " +
			"such as 336h; 0 keeps them however old).",
	},
	MaxActionResultsSize: {
		Type: TypeString, Default: "5G", check: checkActionResultsSize,
		Description: "How much space the results of finished actions and exec commands may take " +
			"before the oldest are removed (a size in MiB, or with a suffix M, G, T; 0 for no limit).",
	},
	NoProxy: {
		Type: TypeString, Default: noProxyDefault,
		Description: "The hosts hooks and actions reach without a proxy: no_proxy and NO_PROXY in their environment.",
	},
	UpdateStatusHookInterval: {
		Type: TypeString, Default: "5m", check: checkUpdateStatusInterval,
		Description: "How often every unit runs its charm's update-status hook.",
		Here:        "Juju accepts 1m to 60m; this controller accepts 1s to 60m, so that charm tests need not wait.",
	},
}

func init() {
	for name, k := range keys {
		k.Name = name
		keys[name] = k
	}
}

// Keys lists the keys a model's configuration may hold, sorted.
func Keys() []string { return slices.Sorted(maps.Keys(keys)) }

// Lookup returns a key's description.
func Lookup(name string) (Key, bool) {
	k, ok := keys[name]
	return k, ok
}

// UnknownKeyError is a key this controller does not know, in Juju's words.
func UnknownKeyError(key string) error {
	return fmt.Errorf("key %q is not defined in the current model configuration: possible misspelling", key)
}

// Validate checks a configuration a model is created with: every key known and settable,
// every value valid. The first problem is the error.
func Validate(config map[string]string) error {
	_, err := Apply(nil, config, nil)
	return err
}

// Apply returns current with the values of set and without the keys of reset, each value in
// its canonical form, or the first problem: an unknown key, a read-only key, a bad value, a
// key both set and reset, legacy and juju- proxies together. current is not changed.
func Apply(current, set map[string]string, reset []string) (map[string]string, error) {
	for _, name := range reset {
		k, ok := keys[name]
		switch {
		case !ok:
			return nil, UnknownKeyError(name)
		case k.ReadOnly:
			return nil, fmt.Errorf("%q cannot be reset", name)
		}
		if _, both := set[name]; both {
			return nil, fmt.Errorf("cannot set and reset key %q simultaneously", name)
		}
	}
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		value, err := Check(name, set[name])
		if err != nil {
			return nil, err
		}
		out[name] = value
	}
	for _, name := range reset {
		delete(out, name)
	}
	// Juju refuses both kinds of proxy at once: charms would not know which to use.
	eff := Effective(out)
	legacy := eff[HTTPProxy] != "" || eff[HTTPSProxy] != "" || eff[FTPProxy] != ""
	juju := eff[JujuHTTPProxy] != "" || eff[JujuHTTPSProxy] != "" || eff[JujuFTPProxy] != ""
	if legacy && juju {
		return nil, fmt.Errorf("cannot specify both legacy proxy values and juju proxy values")
	}
	return out, nil
}

// Check validates one value of a key that may be set and returns its canonical form.
func Check(name, value string) (string, error) {
	k, ok := keys[name]
	if !ok {
		return "", UnknownKeyError(name)
	}
	if k.ReadOnly {
		return "", fmt.Errorf("%q cannot be set: it is the Juju version this controller implements (%s)", name, version.Juju)
	}
	if k.check == nil {
		return value, nil
	}
	return k.check(value)
}

// Value is one key's value in effect and where it comes from.
type Value struct {
	Key    Key
	Value  string
	Source string
}

// Typed is the value as its type: a bool for a bool key, else the string.
func (v Value) Typed() any {
	if v.Key.Type == TypeBool {
		b, err := strconv.ParseBool(v.Value)
		if err == nil {
			return b
		}
	}
	return v.Value
}

// Values lists every key's value in effect for a model whose configuration is config, on a
// controller whose model defaults are defaults, sorted by key.
func Values(defaults, config map[string]string) []Value {
	var out []Value
	for _, name := range Keys() {
		k := keys[name]
		value, source := inEffect(k, defaults, config)
		out = append(out, Value{Key: k, Value: value, Source: source})
	}
	return out
}

// inEffect is k's value and where it comes from: the model, else the controller's defaults,
// else Juju's default; the agent version is always this controller's.
func inEffect(k Key, defaults, config map[string]string) (value, source string) {
	if k.Name == AgentVersion {
		return version.Juju, SourceModel
	}
	if set, ok := config[k.Name]; ok {
		return set, SourceModel
	}
	if set, ok := defaults[k.Name]; ok {
		return set, SourceController
	}
	return k.Default, SourceDefault
}

// Inherit is a model's configuration as set, with the controller's model defaults for the
// keys the model does not set (Juju's defaults are not filled in).
func Inherit(defaults, config map[string]string) map[string]string {
	if len(defaults) == 0 {
		return config
	}
	out := maps.Clone(defaults)
	maps.Copy(out, config)
	return out
}

// Effective is every key's value in effect, defaults filled in: what agents are given. config
// is the model's configuration with the controller's defaults already inherited.
// Every unit agent's wake-up asks for it: it is built straight from the keys, without
// Values' sorted list of descriptions, which made it a sixtieth of all the controller allocated.
func Effective(config map[string]string) map[string]string {
	out := make(map[string]string, len(keys))
	for name, k := range keys {
		out[name], _ = inEffect(k, nil, config)
	}
	return out
}

// UpdateStatusInterval is the model's update-status-hook-interval, its default when unset or
// unreadable (a stored value was validated when set).
func UpdateStatusInterval(config map[string]string) time.Duration {
	if d, err := time.ParseDuration(config[UpdateStatusHookInterval]); err == nil && d > 0 {
		return d
	}
	return DefaultUpdateStatusHookInterval
}

// RetryHooks reports whether unit agents retry failed hooks by themselves.
func RetryHooks(config map[string]string) bool {
	v, ok := config[AutomaticallyRetryHooks]
	if !ok {
		v = keys[AutomaticallyRetryHooks].Default
	}
	b, _ := strconv.ParseBool(v)
	return b
}

// ProxyEnv is the environment a model's proxy keys give hooks and actions, as Juju gives it:
// JUJU_CHARM_*_PROXY always (empty when unset), and, when a legacy proxy is set, the legacy
// lower- and upper-case variables of each legacy value that is not empty.
func ProxyEnv(config map[string]string) []string {
	eff := Effective(config)
	env := []string{
		"JUJU_CHARM_HTTP_PROXY=" + eff[JujuHTTPProxy],
		"JUJU_CHARM_HTTPS_PROXY=" + eff[JujuHTTPSProxy],
		"JUJU_CHARM_FTP_PROXY=" + eff[JujuFTPProxy],
		"JUJU_CHARM_NO_PROXY=" + eff[JujuNoProxy],
	}
	if eff[HTTPProxy] == "" && eff[HTTPSProxy] == "" && eff[FTPProxy] == "" {
		return env
	}
	for _, p := range []struct{ key, name string }{
		{HTTPProxy, "http_proxy"}, {HTTPSProxy, "https_proxy"}, {FTPProxy, "ftp_proxy"}, {NoProxy, "no_proxy"},
	} {
		if v := eff[p.key]; v != "" {
			env = append(env, p.name+"="+v, strings.ToUpper(p.name)+"="+v)
		}
	}
	return env
}

func checkBool(name string) func(string) (string, error) {
	return func(value string) (string, error) {
		b, err := strconv.ParseBool(value)
		if err != nil {
			// Juju's schema error.
			return "", fmt.Errorf("%s: expected bool, got string(%q)", name, value)
		}
		return strconv.FormatBool(b), nil
	}
}

func checkUpdateStatusInterval(value string) (string, error) {
	d, err := time.ParseDuration(value)
	if err != nil {
		return "", fmt.Errorf("invalid update status hook interval in model configuration: %v", err)
	}
	if d < minUpdateStatusHookInterval {
		return "", fmt.Errorf("update status hook frequency %v cannot be less than %v", d, minUpdateStatusHookInterval)
	}
	if d > maxUpdateStatusHookInterval {
		return "", fmt.Errorf("update status hook frequency %v cannot be greater than 60m", d)
	}
	return value, nil
}

func checkDefaultBase(value string) (string, error) {
	if value == "" {
		return "", nil
	}
	b, err := base.Parse(value)
	if err != nil {
		return "", fmt.Errorf("invalid default base %q: %v", value, err)
	}
	if !base.IsSupported(b) {
		return "", fmt.Errorf("base %q not supported", b.DisplayString())
	}
	if b.Channel.Risk == base.Stable {
		return b.DisplayString(), nil
	}
	return b.String(), nil
}

func checkLoggingConfig(value string) (string, error) {
	if _, err := ParseLoggingConfig(value); err != nil {
		return "", err
	}
	return strings.TrimSpace(value), nil
}

func checkActionResultsAge(value string) (string, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		return "", fmt.Errorf("invalid max action age %q: expected a duration such as 336h", value)
	}
	return value, nil
}

func checkActionResultsSize(value string) (string, error) {
	if _, err := ParseSize(value); err != nil {
		return "", err
	}
	return value, nil
}

// sizeUnits are the multipliers of ParseSize's suffixes, in MiB.
var sizeUnits = map[byte]int64{'M': 1, 'G': 1 << 10, 'T': 1 << 20, 'P': 1 << 30}

// ParseSize reads a size as Juju's configuration writes it: a non-negative number of MiB with
// an optional suffix M, G, T or P (optionally followed by B or iB), e.g. 5G; it returns bytes.
func ParseSize(value string) (int64, error) {
	bad := fmt.Errorf("invalid max action size %q: expected a size such as 5G", value)
	s := strings.ToUpper(strings.TrimSpace(value))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if n := len(s); n > 0 {
		if m, ok := sizeUnits[s[n-1]]; ok {
			mult, s = m, s[:n-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*float64(mult) > float64(math.MaxInt64>>20) {
		return 0, bad
	}
	return int64(f * float64(mult) * (1 << 20)), nil
}

// ActionResultsLimits are a model's max-action-results-age and -size (0: no limit), their
// defaults when unset or unreadable (stored values were validated when set).
func ActionResultsLimits(config map[string]string) (maxAge time.Duration, maxBytes int64) {
	eff := Effective(config)
	maxAge, _ = time.ParseDuration(eff[MaxActionResultsAge])
	maxBytes, _ = ParseSize(eff[MaxActionResultsSize])
	return maxAge, maxBytes
}
