package modelconfig

import (
	"fmt"
	"strings"
)

// Level is a log severity, ordered as Juju's loggo orders them.
type Level int

// The levels. Unspecified in a logging config means "as the parent logger".
const (
	Unspecified Level = iota
	Trace
	Debug
	Info
	Warning
	Error
	Critical
)

// ParseLevel reads a level name (any case; WARN for WARNING), as loggo does.
func ParseLevel(s string) (Level, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UNSPECIFIED":
		return Unspecified, true
	case "TRACE":
		return Trace, true
	case "DEBUG":
		return Debug, true
	case "INFO":
		return Info, true
	case "WARN", "WARNING":
		return Warning, true
	case "ERROR":
		return Error, true
	case "CRITICAL":
		return Critical, true
	}
	return Unspecified, false
}

// Loggers is a parsed logging-config: the level of each named logger, "" being <root>.
type Loggers map[string]Level

// ParseLoggingConfig parses a logging-config as Juju's loggo does: "<module>=<level>" entries
// separated by ';' or ':', "<root>" naming the root logger, or a level alone for the root.
// Its errors are loggo's.
func ParseLoggingConfig(spec string) (Loggers, error) {
	out := Loggers{}
	if level, ok := ParseLevel(spec); ok {
		out[""] = level
		return out, nil
	}
	for _, entry := range strings.FieldsFunc(spec, func(r rune) bool { return r == ';' || r == ':' }) {
		name, levelName, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("logger specification expected '=', found %q", entry)
		}
		name, levelName = strings.TrimSpace(name), strings.TrimSpace(levelName)
		if name == "" || levelName == "" {
			return nil, fmt.Errorf("logger specification %q has blank name or level", entry)
		}
		if name == "<root>" {
			name = ""
		}
		level, ok := ParseLevel(levelName)
		if !ok {
			return nil, fmt.Errorf("unknown severity level %q", levelName)
		}
		out[strings.ToLower(name)] = level
	}
	return out, nil
}

// Enabled reports whether a record of module at level is logged: the nearest logger with a
// level wins (unit.mysql/0.juju-log, then unit.mysql/0, then unit, then <root>); with none,
// loggo's default WARNING.
func (l Loggers) Enabled(module string, level Level) bool {
	name := strings.ToLower(module)
	for {
		if min, ok := l[name]; ok && min != Unspecified {
			return level >= min
		}
		if name == "" {
			return level >= Warning
		}
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			name = ""
		} else {
			name = name[:i]
		}
	}
}
