// Package base parses and selects the OS bases (os@channel) that charms
// and machines run on.
package base

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Risk levels a channel may carry.
const (
	Stable    = "stable"
	Candidate = "candidate"
	Beta      = "beta"
	Edge      = "edge"
)

var risks = []string{Stable, Candidate, Beta, Edge}

// Channel is a base's track, optionally with a risk. Unlike a charm's
// channel it has no branch: Juju 3.6 refuses one ("22.04/edge/foo").
type Channel struct {
	Track string
	Risk  string
}

// ParseChannel parses <track>[/<risk>] without filling in a missing
// risk. The messages are Juju's.
func ParseChannel(s string) (Channel, error) {
	if s == "" {
		return Channel{}, errors.New("empty channel not valid")
	}
	track, risk, hasRisk := strings.Cut(s, "/")
	if strings.Contains(risk, "/") {
		return Channel{}, fmt.Errorf("channel is malformed and has too many components %q", s)
	}
	if hasRisk && !slices.Contains(risks, risk) {
		return Channel{}, fmt.Errorf("risk in channel %q not valid", s)
	}
	if track == "" {
		return Channel{}, fmt.Errorf("track in channel %q not valid", s)
	}
	return Channel{Track: track, Risk: risk}, nil
}

// String prints track[/risk].
func (c Channel) String() string {
	if c.Risk == "" {
		return c.Track
	}
	return c.Track + "/" + c.Risk
}

// DisplayString prints the track, with the risk unless it is stable:
// "22.04", "22.04/edge".
func (c Channel) DisplayString() string {
	if c.Risk == "" || c.Risk == Stable {
		return c.Track
	}
	return c.Track + "/" + c.Risk
}

// Base is an operating system and channel, such as ubuntu@22.04/stable.
type Base struct {
	OS      string
	Channel Channel
}

// Parse parses <os>@<track>[/<risk>] as Juju's ParseBaseFromString does:
// exactly one "@", a channel ParseChannel accepts, and a missing risk
// becomes "stable" so that parsed bases print with their risk. The OS
// and track are not checked here: whether a base can be deployed is
// decided later (Select, the provider), with its own message.
func Parse(s string) (Base, error) {
	osName, channel, ok := strings.Cut(s, "@")
	if !ok || strings.Contains(channel, "@") {
		return Base{}, errors.New("expected base string to contain os and channel separated by '@'")
	}
	c, err := ParseChannel(channel)
	if err != nil {
		return Base{}, err
	}
	return Base{OS: osName, Channel: c}.normalized(), nil
}

// MakeDefault returns the base os@track with stable risk.
func MakeDefault(os, track string) Base {
	return Base{OS: os, Channel: Channel{Track: track, Risk: Stable}}
}

// String prints the base with its risk when it has one
// ("ubuntu@22.04/stable"), as deploy messages do; a base without an OS
// prints as "".
func (b Base) String() string {
	if b.OS == "" {
		return ""
	}
	return b.OS + "@" + b.Channel.String()
}

// DisplayString prints the base as status does: without a stable risk
// ("ubuntu@22.04"), with any other ("ubuntu@22.04/edge"); "" without an
// OS or a track.
func (b Base) DisplayString() string {
	if b.OS == "" || b.Channel.Track == "" {
		return ""
	}
	return b.OS + "@" + b.Channel.DisplayString()
}

// IsCompatible reports whether the two bases have the same OS and track;
// risk and branch do not matter.
func (b Base) IsCompatible(o Base) bool {
	return b.OS == o.OS && b.Channel.Track == o.Channel.Track
}

// IsZero reports whether b is the zero base (none given).
func (b Base) IsZero() bool {
	return b == Base{}
}

// normalized fills in the stable risk that Parse would have given.
func (b Base) normalized() Base {
	if !b.IsZero() && b.Channel.Risk == "" {
		b.Channel.Risk = Stable
	}
	return b
}

type seriesBase struct {
	series, os, track string
}

// seriesTable maps every series name Juju knows to its base, old ones
// included, so that charms whose metadata still lists them (series:
// [quantal]) parse.
var seriesTable = []seriesBase{
	{"precise", "ubuntu", "12.04"},
	{"quantal", "ubuntu", "12.10"},
	{"raring", "ubuntu", "13.04"},
	{"saucy", "ubuntu", "13.10"},
	{"trusty", "ubuntu", "14.04"},
	{"utopic", "ubuntu", "14.10"},
	{"vivid", "ubuntu", "15.04"},
	{"wily", "ubuntu", "15.10"},
	{"xenial", "ubuntu", "16.04"},
	{"yakkety", "ubuntu", "16.10"},
	{"zesty", "ubuntu", "17.04"},
	{"artful", "ubuntu", "17.10"},
	{"bionic", "ubuntu", "18.04"},
	{"cosmic", "ubuntu", "18.10"},
	{"disco", "ubuntu", "19.04"},
	{"eoan", "ubuntu", "19.10"},
	{"focal", "ubuntu", "20.04"},
	{"groovy", "ubuntu", "20.10"},
	{"hirsute", "ubuntu", "21.04"},
	{"impish", "ubuntu", "21.10"},
	{"jammy", "ubuntu", "22.04"},
	{"kinetic", "ubuntu", "22.10"},
	{"lunar", "ubuntu", "23.04"},
	{"mantic", "ubuntu", "23.10"},
	{"noble", "ubuntu", "24.04"},
	{"oracular", "ubuntu", "24.10"},
	{"plucky", "ubuntu", "25.04"},
	{"questing", "ubuntu", "25.10"},
	{"resolute", "ubuntu", "26.04"},
	{"centos7", "centos", "7"},
	{"centos9", "centos", "9"},
}

// FromSeries converts a series name such as "jammy" to its base.
func FromSeries(series string) (Base, error) {
	for _, e := range seriesTable {
		if e.series == series {
			return MakeDefault(e.os, e.track), nil
		}
	}
	return Base{}, fmt.Errorf("series %q not valid", series)
}

// Series returns the series name of b, for charms and tools that still
// use series.
func (b Base) Series() (string, error) {
	for _, e := range seriesTable {
		if e.os == b.OS && e.track == b.Channel.Track {
			return e.series, nil
		}
	}
	return "", fmt.Errorf("os %q version %q not found", b.OS, b.Channel.Track)
}

// DefaultLTS is the base used when neither the user, the model nor the
// charm's order says otherwise.
var DefaultLTS = MakeDefault("ubuntu", "24.04")

// supported lists the workload bases Juju 3.6 deploys to on clouds. They
// are what completion offers and what deploy prefers among a charm's bases.
var supported = []Base{
	MakeDefault("ubuntu", "20.04"),
	MakeDefault("ubuntu", "22.04"),
	MakeDefault("ubuntu", "24.04"),
}

// IsSupported reports whether Juju 3.6 deploys workloads on b on a cloud.
// The local provider runs more: see LocalProviderRuns.
func IsSupported(b Base) bool {
	return slices.ContainsFunc(supported, b.IsCompatible)
}

// SupportedString lists the supported bases for messages.
func SupportedString() string {
	return displayList(supported)
}

// LocalProviderRuns reports whether the local provider can run a machine
// of base b: any Ubuntu release in the series table. A local machine is a
// directory and an agent on this host, so its base only labels it (hooks
// run on the host's own OS); refusing old Ubuntu releases would only stop
// old charms that run fine. Other OSes (centos) are refused: charms for
// them expect tools (yum, ...) an Ubuntu host lacks.
func LocalProviderRuns(b Base) bool {
	if b.OS != "ubuntu" {
		return false
	}
	for _, e := range seriesTable {
		if e.os == b.OS && e.track == b.Channel.Track {
			return true
		}
	}
	return false
}

// LocalProviderString says which bases the local provider runs, for
// messages.
func LocalProviderString() string {
	var first, last string
	for _, e := range seriesTable {
		if e.os != "ubuntu" {
			continue
		}
		if first == "" {
			first = e.os + "@" + e.track
		}
		last = e.os + "@" + e.track
	}
	return "the local provider runs any Ubuntu release from " + first + " to " + last
}

// displayList joins the bases' display strings, skipping repeats (a
// manifest lists a base once per architecture).
func displayList(bases []Base) string {
	var names []string
	for _, b := range bases {
		if s := b.DisplayString(); !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	return strings.Join(names, ", ")
}

// Select picks the base to deploy a charm on, first match wins: the
// requested base, the model's default base, DefaultLTS if the charm lists
// it, the charm's first base Juju supports (IsSupported), the charm's first
// base the local provider runs (an old charm listing only series:
// [quantal] deploys on ubuntu@12.10). A requested or model base must be
// one the local provider runs and, unless force is set, one the charm
// lists.
func Select(requested, modelDefault Base, charmBases []Base, force bool) (Base, error) {
	if len(charmBases) == 0 {
		return Base{}, errors.New("charm does not define any bases, not valid")
	}
	for _, b := range []Base{requested, modelDefault} {
		if b.IsZero() {
			continue
		}
		b = b.normalized()
		if !LocalProviderRuns(b) {
			return Base{}, fmt.Errorf("base: %s not supported: %s", b, LocalProviderString())
		}
		if !force && !slices.ContainsFunc(charmBases, b.IsCompatible) {
			return Base{}, fmt.Errorf("base %q is not supported, supported bases are: %s", b.DisplayString(), displayList(charmBases))
		}
		return b, nil
	}
	if slices.ContainsFunc(charmBases, DefaultLTS.IsCompatible) {
		return DefaultLTS, nil
	}
	for _, runs := range []func(Base) bool{IsSupported, LocalProviderRuns} {
		for _, b := range charmBases {
			if runs(b) {
				return b.normalized(), nil
			}
		}
	}
	return Base{}, fmt.Errorf("the charm defined bases %q not supported: %s", displayList(charmBases), LocalProviderString())
}
