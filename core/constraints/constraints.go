// Package constraints parses, prints, validates and merges machine
// constraints such as "mem=4G cores=2".
package constraints

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Value holds constraints. A nil field is unset; a pointer to a zero or
// empty value is explicitly empty, which overrides a fallback when merged.
// The fields are in Juju's order, which is the key order of its JSON and
// YAML output (juju constraints --format json).
type Value struct {
	Arch             *string   `json:"arch,omitempty" yaml:"arch,omitempty"`
	Container        *string   `json:"container,omitempty" yaml:"container,omitempty"`
	Cores            *uint64   `json:"cores,omitempty" yaml:"cores,omitempty"`
	CpuPower         *uint64   `json:"cpu-power,omitempty" yaml:"cpu-power,omitempty"`
	Mem              *uint64   `json:"mem,omitempty" yaml:"mem,omitempty"`             // MB
	RootDisk         *uint64   `json:"root-disk,omitempty" yaml:"root-disk,omitempty"` // MB
	RootDiskSource   *string   `json:"root-disk-source,omitempty" yaml:"root-disk-source,omitempty"`
	Tags             *[]string `json:"tags,omitempty" yaml:"tags,omitempty"`
	InstanceRole     *string   `json:"instance-role,omitempty" yaml:"instance-role,omitempty"`
	InstanceType     *string   `json:"instance-type,omitempty" yaml:"instance-type,omitempty"`
	Spaces           *[]string `json:"spaces,omitempty" yaml:"spaces,omitempty"`
	VirtType         *string   `json:"virt-type,omitempty" yaml:"virt-type,omitempty"`
	Zones            *[]string `json:"zones,omitempty" yaml:"zones,omitempty"`
	AllocatePublicIP *bool     `json:"allocate-public-ip,omitempty" yaml:"allocate-public-ip,omitempty"`
	ImageID          *string   `json:"image-id,omitempty" yaml:"image-id,omitempty"`
}

// Constraint keys.
const (
	Arch             = "arch"
	Container        = "container"
	Cores            = "cores"
	CpuPower         = "cpu-power"
	Mem              = "mem"
	RootDisk         = "root-disk"
	RootDiskSource   = "root-disk-source"
	InstanceRole     = "instance-role"
	InstanceType     = "instance-type"
	Tags             = "tags"
	Spaces           = "spaces"
	VirtType         = "virt-type"
	Zones            = "zones"
	AllocatePublicIP = "allocate-public-ip"
	ImageID          = "image-id"
)

// Arches lists the recognised architectures.
var Arches = []string{"amd64", "arm64", "ppc64el", "s390x", "riscv64"}

// ContainerTypes lists the recognised values of the container constraint.
var ContainerTypes = []string{"lxd", "kvm", "none"}

// aliases maps deprecated keys to their replacement.
var aliases = map[string]string{"cpu-cores": Cores}

// conflicts lists, per key, the keys that may not be set alongside it:
// an instance type already fixes memory and CPU. Parse does not check
// them (Juju's parser accepts "instance-type=x mem=4G"); they are the
// provider's business: Validate and Merge use them.
var conflicts = map[string][]string{
	InstanceType: {Cores, CpuPower, Mem},
	Cores:        {InstanceType},
	CpuPower:     {InstanceType},
	Mem:          {InstanceType},
}

var spaceNameRe = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// attr describes one key; the table below is in String's key order.
type attr struct {
	key   string
	isSet func(v *Value) bool
	clear func(v *Value)
	set   func(v *Value, raw string) error
	str   func(v *Value) string // only called when set
}

var attrs = []attr{
	{Arch,
		func(v *Value) bool { return v.Arch != nil },
		func(v *Value) { v.Arch = nil },
		func(v *Value, s string) (err error) { v.Arch, err = parseChoice(s, Arches); return },
		func(v *Value) string { return *v.Arch }},
	{Container,
		func(v *Value) bool { return v.Container != nil },
		func(v *Value) { v.Container = nil },
		func(v *Value, s string) (err error) { v.Container, err = parseContainer(s); return },
		func(v *Value) string { return *v.Container }},
	{Cores,
		func(v *Value) bool { return v.Cores != nil },
		func(v *Value) { v.Cores = nil },
		func(v *Value, s string) (err error) { v.Cores, err = parseUint(s); return },
		func(v *Value) string { return uintString(*v.Cores) }},
	{CpuPower,
		func(v *Value) bool { return v.CpuPower != nil },
		func(v *Value) { v.CpuPower = nil },
		func(v *Value, s string) (err error) { v.CpuPower, err = parseUint(s); return },
		func(v *Value) string { return uintString(*v.CpuPower) }},
	{InstanceRole,
		func(v *Value) bool { return v.InstanceRole != nil },
		func(v *Value) { v.InstanceRole = nil },
		func(v *Value, s string) error { v.InstanceRole = &s; return nil },
		func(v *Value) string { return escape(*v.InstanceRole) }},
	{InstanceType,
		func(v *Value) bool { return v.InstanceType != nil },
		func(v *Value) { v.InstanceType = nil },
		func(v *Value, s string) error { v.InstanceType = &s; return nil },
		func(v *Value) string { return escape(*v.InstanceType) }},
	{Mem,
		func(v *Value) bool { return v.Mem != nil },
		func(v *Value) { v.Mem = nil },
		func(v *Value, s string) (err error) { v.Mem, err = parseSize(s); return },
		func(v *Value) string { return sizeString(*v.Mem) }},
	{RootDisk,
		func(v *Value) bool { return v.RootDisk != nil },
		func(v *Value) { v.RootDisk = nil },
		func(v *Value, s string) (err error) { v.RootDisk, err = parseSize(s); return },
		func(v *Value) string { return sizeString(*v.RootDisk) }},
	{RootDiskSource,
		func(v *Value) bool { return v.RootDiskSource != nil },
		func(v *Value) { v.RootDiskSource = nil },
		func(v *Value, s string) error { v.RootDiskSource = &s; return nil },
		func(v *Value) string { return escape(*v.RootDiskSource) }},
	{Tags,
		func(v *Value) bool { return v.Tags != nil },
		func(v *Value) { v.Tags = nil },
		func(v *Value, s string) error { v.Tags = parseList(s); return nil },
		func(v *Value) string { return listString(*v.Tags) }},
	{Spaces,
		func(v *Value) bool { return v.Spaces != nil },
		func(v *Value) { v.Spaces = nil },
		func(v *Value, s string) (err error) { v.Spaces, err = parseSpaces(s); return },
		func(v *Value) string { return listString(*v.Spaces) }},
	{VirtType,
		func(v *Value) bool { return v.VirtType != nil },
		func(v *Value) { v.VirtType = nil },
		func(v *Value, s string) error { v.VirtType = &s; return nil },
		func(v *Value) string { return escape(*v.VirtType) }},
	{Zones,
		func(v *Value) bool { return v.Zones != nil },
		func(v *Value) { v.Zones = nil },
		func(v *Value, s string) error { v.Zones = parseList(s); return nil },
		func(v *Value) string { return listString(*v.Zones) }},
	{AllocatePublicIP,
		func(v *Value) bool { return v.AllocatePublicIP != nil },
		func(v *Value) { v.AllocatePublicIP = nil },
		func(v *Value, s string) (err error) { v.AllocatePublicIP, err = parseBool(s); return },
		func(v *Value) string { return strconv.FormatBool(*v.AllocatePublicIP) }},
	{ImageID,
		func(v *Value) bool { return v.ImageID != nil },
		func(v *Value) { v.ImageID = nil },
		func(v *Value, s string) error { v.ImageID = &s; return nil },
		func(v *Value) string { return escape(*v.ImageID) }},
}

func findAttr(key string) (attr, bool) {
	for _, a := range attrs {
		if a.key == key {
			return a, true
		}
	}
	return attr{}, false
}

// Parse parses key=value constraints separated by spaces, where "\ "
// stands for a space inside a value. Each argument is read in turn, as
// Juju's parser reads them; a key given twice, in one argument or in two,
// is an error.
func Parse(args ...string) (Value, error) {
	v, _, err := ParseWithWarnings(args...)
	return v, err
}

// ParseWithWarnings is Parse that also returns the deprecation warnings
// the caller should show, one per deprecated alias used (cpu-cores). As in
// Juju they come back even with an error about a later item, so that the
// error has its context; a malformed item returns none.
func ParseWithWarnings(args ...string) (Value, []string, error) {
	var v Value
	var warnings []string
	for _, arg := range args {
		for _, item := range split(arg) {
			key, raw, ok := strings.Cut(item, "=")
			if !ok || key == "" {
				return Value{}, nil, fmt.Errorf("malformed constraint %q", item)
			}
			if canonical, ok := aliases[key]; ok {
				msg := fmt.Sprintf("constraint %q is deprecated in favor of %q", key, canonical)
				if !slices.Contains(warnings, msg) {
					warnings = append(warnings, msg)
				}
				key = canonical
			}
			a, ok := findAttr(key)
			if !ok {
				return Value{}, warnings, fmt.Errorf("unknown constraint %q", key)
			}
			// Juju ignores an empty allocate-public-ip, even after a value:
			// unset, the provider's default (a public address) applies.
			if key == AllocatePublicIP && raw == "" {
				continue
			}
			if a.isSet(&v) {
				return Value{}, warnings, fmt.Errorf("bad %q constraint: already set", key)
			}
			if err := a.set(&v, raw); err != nil {
				return Value{}, warnings, fmt.Errorf("bad %q constraint: %v", key, err)
			}
		}
	}
	return v, warnings, nil
}

// split cuts one argument into items as Juju does: an escaped space ("\ ")
// is kept, the argument is trimmed and cut at each plain space, and each
// item is trimmed of surrounding white space (escaped spaces included);
// empty items are dropped.
func split(arg string) []string {
	const hole = "\x00"
	arg = strings.ReplaceAll(arg, `\ `, hole)
	var items []string
	for _, item := range strings.Split(strings.TrimSpace(arg), " ") {
		item = strings.TrimSpace(strings.ReplaceAll(item, hole, " "))
		if item != "" {
			items = append(items, item)
		}
	}
	return items
}

func parseChoice(s string, choices []string) (*string, error) {
	if s != "" && !slices.Contains(choices, s) {
		return nil, fmt.Errorf("%q not recognized", s)
	}
	return &s, nil
}

func parseContainer(s string) (*string, error) {
	if s != "" && !slices.Contains(ContainerTypes, s) {
		return nil, fmt.Errorf("invalid container type %q", s)
	}
	return &s, nil
}

func parseUint(s string) (*uint64, error) {
	var n uint64
	if s != "" {
		var err error
		if n, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, fmt.Errorf("must be a non-negative integer")
		}
	}
	return &n, nil
}

// sizeMultipliers convert a size suffix to megabytes.
var sizeMultipliers = map[byte]float64{
	'M': 1,
	'G': 1024,
	'T': 1024 * 1024,
	'P': 1024 * 1024 * 1024,
}

func parseSize(s string) (*uint64, error) {
	var n uint64
	if s != "" {
		mult := 1.0
		if m, ok := sizeMultipliers[s[len(s)-1]]; ok {
			mult = m
			s = s[:len(s)-1]
		}
		bad := fmt.Errorf("must be a non-negative float with optional M/G/T/P suffix")
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f < 0 {
			return nil, bad
		}
		// Round up so a request is never silently shrunk.
		f = math.Ceil(f * mult)
		if f >= math.MaxUint64 {
			return nil, bad
		}
		n = uint64(f)
	}
	return &n, nil
}

func parseBool(s string) (*bool, error) {
	var b bool
	if s != "" {
		var err error
		if b, err = strconv.ParseBool(s); err != nil {
			return nil, fmt.Errorf("must be 'true' or 'false'")
		}
	}
	return &b, nil
}

// parseList splits a comma list, keeping empty items as Juju does
// ("a,,b" has three); "" is an explicitly empty list.
func parseList(s string) *[]string {
	items := []string{}
	if s != "" {
		items = strings.Split(s, ",")
	}
	return &items
}

func parseSpaces(s string) (*[]string, error) {
	items := parseList(s)
	for _, item := range *items {
		name := strings.TrimPrefix(item, "^")
		if !spaceNameRe.MatchString(name) {
			return nil, fmt.Errorf("%q is not a valid space name", name)
		}
	}
	return items, nil
}

// uintString prints zero as empty: zero and empty mean the same.
func uintString(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

func sizeString(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10) + "M"
}

func escape(s string) string {
	return strings.ReplaceAll(s, " ", `\ `)
}

func listString(items []string) string {
	return escape(strings.Join(items, ","))
}

// String prints the set constraints in a fixed key order, in a form Parse
// accepts.
func (v Value) String() string {
	var parts []string
	for _, a := range attrs {
		if a.isSet(&v) {
			parts = append(parts, a.key+"="+a.str(&v))
		}
	}
	return strings.Join(parts, " ")
}

// IsEmpty reports whether no constraint is set, not even explicitly empty.
func (v Value) IsEmpty() bool {
	return len(v.Keys()) == 0
}

// HasAny reports whether any constraint is set.
func (v Value) HasAny() bool {
	return !v.IsEmpty()
}

// Keys returns the keys that are set, in String's order.
func (v Value) Keys() []string {
	var keys []string
	for _, a := range attrs {
		if a.isSet(&v) {
			keys = append(keys, a.key)
		}
	}
	return keys
}

// Without returns a copy of v with the given keys unset; an alias
// (cpu-cores) stands for its key and unknown keys are ignored.
func (v Value) Without(keys ...string) Value {
	r := v.clone()
	for _, key := range keys {
		if canonical, ok := aliases[key]; ok {
			key = canonical
		}
		if a, ok := findAttr(key); ok {
			a.clear(&r)
		}
	}
	return r
}

// Validate reports constraints that contradict each other: an instance
// type together with mem, cores or cpu-power. It is the provider's check
// (a server-side one), not the parser's: the CLI does not call it.
func Validate(v Value) error {
	if v.InstanceType == nil {
		return nil
	}
	for _, key := range conflicts[InstanceType] {
		if a, _ := findAttr(key); a.isSet(&v) {
			return fmt.Errorf("ambiguous constraints: %q overlaps with %q", InstanceType, key)
		}
	}
	return nil
}

// Merge fills cons's unset attributes from fallback, after dropping from
// fallback every attribute that conflicts with one set in cons. This is
// how model and application constraints collapse (L-C2).
func Merge(fallback, cons Value) Value {
	var drop []string
	for _, key := range cons.Keys() {
		drop = append(drop, conflicts[key]...)
	}
	fb := fallback.Without(drop...)
	r := cons.clone()
	fill(&r.Arch, fb.Arch)
	fill(&r.Container, fb.Container)
	fill(&r.Cores, fb.Cores)
	fill(&r.CpuPower, fb.CpuPower)
	fill(&r.Mem, fb.Mem)
	fill(&r.RootDisk, fb.RootDisk)
	fill(&r.RootDiskSource, fb.RootDiskSource)
	fill(&r.InstanceRole, fb.InstanceRole)
	fill(&r.InstanceType, fb.InstanceType)
	fill(&r.Tags, fb.Tags)
	fill(&r.Spaces, fb.Spaces)
	fill(&r.VirtType, fb.VirtType)
	fill(&r.Zones, fb.Zones)
	fill(&r.AllocatePublicIP, fb.AllocatePublicIP)
	fill(&r.ImageID, fb.ImageID)
	return r
}

func fill[T any](dst **T, src *T) {
	if *dst == nil && src != nil {
		*dst = src
	}
}

// clone copies v deeply so results never share storage with inputs.
func (v Value) clone() Value {
	r := Value{
		Arch:             clonePtr(v.Arch),
		Container:        clonePtr(v.Container),
		Cores:            clonePtr(v.Cores),
		CpuPower:         clonePtr(v.CpuPower),
		Mem:              clonePtr(v.Mem),
		RootDisk:         clonePtr(v.RootDisk),
		RootDiskSource:   clonePtr(v.RootDiskSource),
		InstanceRole:     clonePtr(v.InstanceRole),
		InstanceType:     clonePtr(v.InstanceType),
		Tags:             cloneList(v.Tags),
		Spaces:           cloneList(v.Spaces),
		VirtType:         clonePtr(v.VirtType),
		Zones:            cloneList(v.Zones),
		AllocatePublicIP: clonePtr(v.AllocatePublicIP),
		ImageID:          clonePtr(v.ImageID),
	}
	return r
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

func cloneList(p *[]string) *[]string {
	if p == nil {
		return nil
	}
	c := slices.Clone(*p)
	if c == nil {
		c = []string{}
	}
	return &c
}
