package logsink

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Level is a record's severity; the zero value is "no level", below every named one.
type Level int

// The levels, lowest first.
const (
	LevelNone Level = iota
	Trace
	Debug
	Info
	Warning
	Error
	Critical
)

var levelNames = []string{"", "TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

func (l Level) String() string {
	if l < LevelNone || int(l) >= len(levelNames) {
		return ""
	}
	return levelNames[l]
}

// ParseLevel reads a level name in any case ("warn" is WARNING); "" and unknown names are not ok.
func ParseLevel(s string) (Level, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s == "WARN" {
		return Warning, true
	}
	for i, n := range levelNames {
		if i > 0 && n == s {
			return Level(i), true
		}
	}
	return LevelNone, false
}

// Filter selects records by writing entity, module and level. A nil *Filter selects every record.
//
// Entities are given as Juju's debug-log takes them: a tag ("unit-mysql-0", "machine-1"), a unit
// ("mysql/0"), a machine ("1", "0/lxd/1") or an application ("mysql": every unit of it); "*"
// matches any run of characters ("mysql/*", "unit-*", "*"). A record passes when it matches some
// include pattern (or there are none) and no exclude pattern. Modules match by prefix
// ("unit.mysql/0" selects "unit.mysql/0.juju-log"). Level is the lowest level shown.
type Filter struct {
	include, exclude             []entityMatcher
	includeModule, excludeModule []string
	level                        Level
}

// NewFilter compiles a filter; a bad pattern or level is apierr.NotValid. level "" shows every
// level.
func NewFilter(include, exclude, includeModule, excludeModule []string, level string) (*Filter, error) {
	f := &Filter{includeModule: clean(includeModule), excludeModule: clean(excludeModule)}
	var err error
	if f.include, err = compileEntities(include); err != nil {
		return nil, err
	}
	if f.exclude, err = compileEntities(exclude); err != nil {
		return nil, err
	}
	if level != "" {
		l, ok := ParseLevel(level)
		if !ok {
			return nil, apierr.Errorf(apierr.NotValid, "level %q not valid; use TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL", level)
		}
		f.level = l
	}
	return f, nil
}

// FilterFor is the filter of a DebugLog request.
func FilterFor(req *pb.DebugLogRequest) (*Filter, error) {
	return NewFilter(req.GetInclude(), req.GetExclude(), req.GetIncludeModule(), req.GetExcludeModule(), req.GetLevel())
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *pb.LogRecord) bool {
	if f == nil {
		return true
	}
	if f.level != LevelNone {
		if l, _ := ParseLevel(r.GetLevel()); l < f.level {
			return false
		}
	}
	if len(f.includeModule) > 0 && !hasAnyPrefix(r.GetModule(), f.includeModule) {
		return false
	}
	if hasAnyPrefix(r.GetModule(), f.excludeModule) {
		return false
	}
	if len(f.include) == 0 && len(f.exclude) == 0 {
		return true
	}
	e := parseEntity(r.GetEntity())
	if len(f.include) > 0 && !matchAny(f.include, e) {
		return false
	}
	return !matchAny(f.exclude, e)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func clean(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// entity is a record's writer: kind "unit" (id "mysql/0", app "mysql"), "machine" (id "0/lxd/1")
// or "" for anything else (id is the tag).
type entity struct {
	tag, kind, id, app string
}

func parseEntity(tag string) entity {
	e := entity{tag: tag, id: tag}
	if rest, ok := strings.CutPrefix(tag, "unit-"); ok {
		if i := strings.LastIndex(rest, "-"); i > 0 && i < len(rest)-1 {
			e.kind, e.app, e.id = "unit", rest[:i], rest[:i]+"/"+rest[i+1:]
		}
	} else if rest, ok := strings.CutPrefix(tag, "machine-"); ok && rest != "" {
		// Container tags spell the slashes of the id as dashes ("machine-0-lxd-1").
		e.kind, e.id = "machine", strings.ReplaceAll(rest, "-", "/")
	}
	return e
}

// entityMatcher matches one pattern against one part of an entity.
type entityMatcher struct {
	target string // "tag", "unit", "machine", "app" or "any"
	re     *regexp.Regexp
}

var (
	patternChars   = regexp.MustCompile(`^[a-z0-9*/-]+$`)
	machinePattern = regexp.MustCompile(`^[0-9*][0-9*]*(/[a-z*]+/[0-9*]+)*$`)
)

func compileEntities(patterns []string) ([]entityMatcher, error) {
	var out []entityMatcher
	for _, p := range clean(patterns) {
		m, err := compileEntity(p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func compileEntity(p string) (entityMatcher, error) {
	if !patternChars.MatchString(p) {
		return entityMatcher{}, apierr.Errorf(apierr.NotValid, "entity %q not valid", p)
	}
	m := entityMatcher{re: glob(p)}
	switch {
	case strings.Trim(p, "*") == "":
		m.target = "any"
	case strings.HasPrefix(p, "unit-") || strings.HasPrefix(p, "machine-"):
		m.target = "tag"
	case machinePattern.MatchString(p):
		m.target = "machine"
	case strings.Contains(p, "/"):
		m.target = "unit"
	default:
		m.target = "app"
	}
	return m, nil
}

func (m entityMatcher) match(e entity) bool {
	switch m.target {
	case "any":
		return true
	case "tag":
		return m.re.MatchString(e.tag)
	case "machine":
		return e.kind == "machine" && m.re.MatchString(e.id)
	case "unit":
		return e.kind == "unit" && m.re.MatchString(e.id)
	case "app":
		return e.kind == "unit" && m.re.MatchString(e.app)
	}
	return false
}

func matchAny(ms []entityMatcher, e entity) bool {
	for _, m := range ms {
		if m.match(e) {
			return true
		}
	}
	return false
}

// glob turns a pattern whose only wildcard is "*" into an anchored regexp.
func glob(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile(fmt.Sprintf("^%s$", strings.Join(parts, ".*")))
}
