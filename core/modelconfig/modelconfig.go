// Package modelconfig defines the model configuration keys this controller knows, their
// defaults and how their values are checked.
package modelconfig

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// UpdateStatusHookInterval is how often every unit runs its charm's update-status hook.
const UpdateStatusHookInterval = "update-status-hook-interval"

// DefaultUpdateStatusHookInterval is Juju's default.
const DefaultUpdateStatusHookInterval = 5 * time.Minute

// Juju allows 1m to 60m; this controller also accepts intervals down to a second, so that a
// charm's tests need not wait a minute for update-status.
const (
	minUpdateStatusHookInterval = time.Second
	maxUpdateStatusHookInterval = 60 * time.Minute
)

// Keys lists the keys a model's configuration may hold, sorted.
func Keys() []string { return []string{UpdateStatusHookInterval} }

// Validate checks every key and value; the first problem is the error.
func Validate(config map[string]string) error {
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := validate(k, config[k]); err != nil {
			return err
		}
	}
	return nil
}

func validate(key, value string) error {
	switch key {
	case UpdateStatusHookInterval:
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration (e.g. 5m, 30s)", key, value)
		}
		if d < minUpdateStatusHookInterval || d > maxUpdateStatusHookInterval {
			return fmt.Errorf("%s: %s is outside %s to %s", key, value, minUpdateStatusHookInterval, maxUpdateStatusHookInterval)
		}
		return nil
	}
	return fmt.Errorf("unknown model config key %q (known: %s)", key, strings.Join(Keys(), ", "))
}

// UpdateStatusInterval is the model's update-status-hook-interval, its default when unset or
// unreadable (a stored value was validated when set).
func UpdateStatusInterval(config map[string]string) time.Duration {
	if d, err := time.ParseDuration(config[UpdateStatusHookInterval]); err == nil && d > 0 {
		return d
	}
	return DefaultUpdateStatusHookInterval
}
