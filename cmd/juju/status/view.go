package status

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// View is what `juju status` prints: the JSON/YAML shape follows Juju 3's status format, and Table
// renders Juju's tabular sections.
type View struct {
	Model        ModelView                   `json:"model" yaml:"model"`
	Machines     map[string]*MachineView     `json:"machines" yaml:"machines"`
	Applications map[string]*ApplicationView `json:"applications" yaml:"applications"`
	Controller   ControllerView              `json:"controller" yaml:"controller"`

	// relations feed the Integration section; JSON and YAML show them per application.
	relations     []*jujupb.RelationStatus
	showRelations bool
	streams       *output.Streams
}

// ModelView is the model section.
type ModelView struct {
	Name        string     `json:"name" yaml:"name"`
	Type        string     `json:"type" yaml:"type"`
	Controller  string     `json:"controller" yaml:"controller"`
	Cloud       string     `json:"cloud" yaml:"cloud"`
	Region      string     `json:"region,omitempty" yaml:"region,omitempty"`
	Version     string     `json:"version" yaml:"version"`
	ModelStatus StatusView `json:"model-status" yaml:"model-status"`
	// Warning is one line about how the controller runs (not as root: charm code is not
	// isolated from it); tabular output shows it as the model's Notes.
	Warning string `json:"warning,omitempty" yaml:"warning,omitempty"`
}

// StatusView is one status value. Life is set only when the entity is not alive.
type StatusView struct {
	Current string `json:"current,omitempty" yaml:"current,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	Since   string `json:"since,omitempty" yaml:"since,omitempty"`
	Life    string `json:"life,omitempty" yaml:"life,omitempty"`
}

// BaseView is an OS and channel, e.g. ubuntu "22.04".
type BaseView struct {
	Name    string `json:"name" yaml:"name"`
	Channel string `json:"channel" yaml:"channel"`
}

// MachineView is one machine; its containers nest under it.
type MachineView struct {
	JujuStatus StatusView `json:"juju-status" yaml:"juju-status"`

	Removal `yaml:",inline"`

	Hostname      string                  `json:"hostname,omitempty" yaml:"hostname,omitempty"`
	DNSName       string                  `json:"dns-name,omitempty" yaml:"dns-name,omitempty"`
	IPAddresses   []string                `json:"ip-addresses,omitempty" yaml:"ip-addresses,omitempty"`
	InstanceID    string                  `json:"instance-id" yaml:"instance-id"`
	MachineStatus StatusView              `json:"machine-status" yaml:"machine-status"`
	Base          *BaseView               `json:"base,omitempty" yaml:"base,omitempty"`
	Containers    map[string]*MachineView `json:"containers,omitempty" yaml:"containers,omitempty"`
	Constraints   string                  `json:"constraints,omitempty" yaml:"constraints,omitempty"`
	Hardware      string                  `json:"hardware,omitempty" yaml:"hardware,omitempty"`
}

// Removal says why an entity that is not alive is not gone yet: what it waits for, and when a
// forced removal takes over (RFC 3339). Both are empty for an alive entity.
type Removal struct {
	RemovalBlockedBy []string `json:"removal-blocked-by,omitempty" yaml:"removal-blocked-by,omitempty"`
	ForcedRemovalAt  string   `json:"forced-removal-at,omitempty" yaml:"forced-removal-at,omitempty"`
}

// ApplicationView is one application. Units of a subordinate application appear under their
// principals' units, so a subordinate application has no units of its own here.
type ApplicationView struct {
	Charm       string    `json:"charm" yaml:"charm"`
	Base        *BaseView `json:"base,omitempty" yaml:"base,omitempty"`
	CharmOrigin string    `json:"charm-origin" yaml:"charm-origin"`
	CharmName   string    `json:"charm-name" yaml:"charm-name"`
	CharmRev    int       `json:"charm-rev" yaml:"charm-rev"`
	Exposed     bool      `json:"exposed" yaml:"exposed"`
	// ExposedEndpoints are the expose rules by endpoint ("" for every endpoint), as Juju shows them.
	ExposedEndpoints map[string]*ExposedEndpointView `json:"exposed-endpoints,omitempty" yaml:"exposed-endpoints,omitempty"`
	Life             string                          `json:"life,omitempty" yaml:"life,omitempty"`

	Removal `yaml:",inline"`

	ApplicationStatus StatusView           `json:"application-status" yaml:"application-status"`
	Relations         EndpointRelations    `json:"relations,omitempty" yaml:"relations,omitempty"`
	SubordinateTo     []string             `json:"subordinate-to,omitempty" yaml:"subordinate-to,omitempty"`
	Units             map[string]*UnitView `json:"units,omitempty" yaml:"units,omitempty"`
	Version           string               `json:"version,omitempty" yaml:"version,omitempty"`

	// ready and desired make the Scale column; counted over all the application's units,
	// wherever they are listed.
	ready, desired int
}

// ExposedEndpointView is one expose rule: who may reach the ports opened for its endpoint.
type ExposedEndpointView struct {
	ExposeToSpaces []string `json:"expose-to-spaces,omitempty" yaml:"expose-to-spaces,omitempty"`
	ExposeToCIDRs  []string `json:"expose-to-cidrs,omitempty" yaml:"expose-to-cidrs,omitempty"`
}

// UnitView is one unit; subordinate units nest under their principal.
type UnitView struct {
	WorkloadStatus StatusView `json:"workload-status" yaml:"workload-status"`
	JujuStatus     StatusView `json:"juju-status" yaml:"juju-status"`

	Removal `yaml:",inline"`

	Leader        bool                 `json:"leader,omitempty" yaml:"leader,omitempty"`
	Machine       string               `json:"machine,omitempty" yaml:"machine,omitempty"`
	OpenPorts     []string             `json:"open-ports,omitempty" yaml:"open-ports,omitempty"`
	PublicAddress string               `json:"public-address,omitempty" yaml:"public-address,omitempty"`
	Subordinates  map[string]*UnitView `json:"subordinates,omitempty" yaml:"subordinates,omitempty"`
}

// EndpointRelations maps an application's endpoints to what they are related to (Juju 3 shape).
type EndpointRelations map[string][]RelatedApplicationView

// RelatedApplicationView is one relation of an endpoint, seen from its application: a peer
// relation names the application itself. Life and RemovalBlockedBy are set only while the
// relation is not alive.
type RelatedApplicationView struct {
	RelatedApplication string   `json:"related-application" yaml:"related-application"`
	Interface          string   `json:"interface" yaml:"interface"`
	Scope              string   `json:"scope" yaml:"scope"`
	Life               string   `json:"life,omitempty" yaml:"life,omitempty"`
	RemovalBlockedBy   []string `json:"removal-blocked-by,omitempty" yaml:"removal-blocked-by,omitempty"`
}

// relationRow is one row of the Integration section.
type relationRow struct {
	provider, requirer, iface, kind, message string
}

// ControllerView is the controller section.
type ControllerView struct {
	Timestamp string `json:"timestamp,omitempty" yaml:"timestamp,omitempty"`
}

const (
	sinceLayout     = "02 Jan 2006 15:04:05Z07:00"
	timestampLayout = "15:04:05Z07:00"
	// Juju cuts messages (model notes, applications, units, machines) at 120 characters and the
	// App version at 15, the last three being "...".
	maxMessageLen = 120
	maxVersionLen = 15
	ellipsis      = "..."
)

// NewView builds the status view of fs. controllerName is the client's name for the controller (the
// server's is used when empty); the timestamp is the controller time of fs, or now when fs has none;
// times are shown in UTC when utc is set, else in local time.
func NewView(fs *jujupb.FullStatusResponse, controllerName string, now time.Time, utc bool) *View {
	since := &sinceFormatter{utc: utc}
	status := func(si *jujupb.StatusInfo, life string) StatusView {
		return StatusView{Current: si.GetStatus(), Message: si.GetMessage(), Since: since.format(si.GetSince()), Life: NotAlive(life)}
	}

	m := fs.GetModel()
	if controllerName == "" {
		controllerName = m.GetController()
	}
	ts := now
	if ct := fs.GetControllerTime(); ct != 0 {
		ts = time.Unix(0, ct)
	}
	v := &View{
		Model: ModelView{
			Name:        m.GetName(),
			Type:        m.GetType(),
			Controller:  controllerName,
			Cloud:       m.GetCloud(),
			Region:      m.GetRegion(),
			Version:     m.GetVersion(),
			ModelStatus: status(m.GetStatus(), ""),
			Warning:     m.GetWarning(),
		},
		Machines:     make(map[string]*MachineView, len(fs.GetMachines())),
		Applications: make(map[string]*ApplicationView, len(fs.GetApplications())),
		Controller:   ControllerView{Timestamp: inZone(ts, utc).Format(timestampLayout)},
	}

	// Views are allocated together: a large model has tens of thousands.
	machineViews := make([]MachineView, len(fs.GetMachines()))
	machines := make(map[string]*MachineView, len(fs.GetMachines()))
	for i, pm := range fs.GetMachines() {
		mv := &machineViews[i]
		*mv = MachineView{
			JujuStatus:    status(pm.GetAgentStatus(), pm.GetLife()),
			Hostname:      pm.GetHostname(),
			DNSName:       pm.GetDnsName(),
			InstanceID:    pm.GetInstanceId(),
			MachineStatus: status(pm.GetInstanceStatus(), ""),
			Base:          baseView(pm.GetBase()),
			Constraints:   pm.GetConstraints(),
			Hardware:      pm.GetHardware(),
			Removal:       NewRemoval(pm.GetBlockedBy(), pm.GetForceAfter(), utc),
		}
		if mv.InstanceID == "" {
			mv.InstanceID = "pending" // not provisioned yet, as Juju shows it
		}
		if _, err := netip.ParseAddr(mv.DNSName); err == nil {
			mv.IPAddresses = []string{mv.DNSName}
		}
		machines[pm.GetId()] = mv
	}
	for _, pm := range fs.GetMachines() {
		id := pm.GetId()
		mv := machines[id]
		host := containerHost(id)
		if parent, ok := machines[host]; ok && host != "" {
			if parent.Containers == nil {
				parent.Containers = map[string]*MachineView{}
			}
			parent.Containers[id] = mv
		} else {
			v.Machines[id] = mv
		}
	}

	// Units first, so subordinates can be attached to principals of any application.
	type unitEntry struct {
		view      *UnitView
		principal string
	}
	total := 0
	for _, pa := range fs.GetApplications() {
		total += len(pa.GetUnits())
	}
	unitViews := make([]UnitView, 0, total)
	units := make(map[string]unitEntry, total)
	for _, pa := range fs.GetApplications() {
		for _, pu := range pa.GetUnits() {
			unitViews = append(unitViews, UnitView{
				WorkloadStatus: status(pu.GetWorkloadStatus(), ""),
				JujuStatus:     status(pu.GetAgentStatus(), pu.GetLife()),
				Leader:         pu.GetLeader(),
				OpenPorts:      sortPorts(pu.GetOpenPorts()),
				PublicAddress:  pu.GetPublicAddress(),
				Removal:        NewRemoval(pu.GetBlockedBy(), pu.GetForceAfter(), utc),
			})
			uv := &unitViews[len(unitViews)-1]
			if pu.GetPrincipal() == "" {
				uv.Machine = pu.GetMachine()
			}
			units[pu.GetName()] = unitEntry{view: uv, principal: pu.GetPrincipal()}
		}
	}

	v.relations = fs.GetRelations()
	related := relatedApplications(fs.GetRelations())
	for _, pa := range fs.GetApplications() {
		av := &ApplicationView{
			Charm:             charmRef(pa),
			Base:              baseView(pa.GetBase()),
			CharmOrigin:       pa.GetCharmOrigin(),
			CharmName:         pa.GetCharmName(),
			CharmRev:          int(pa.GetCharmRev()),
			Exposed:           pa.GetExposed(),
			ExposedEndpoints:  exposedEndpoints(pa.GetExposedEndpoints()),
			Life:              NotAlive(pa.GetLife()),
			Removal:           NewRemoval(pa.GetBlockedBy(), pa.GetForceAfter(), utc),
			ApplicationStatus: status(applicationStatus(pa), ""),
			Relations:         related[pa.GetName()],
			Version:           pa.GetWorkloadVersion(),
		}
		av.SubordinateTo = sortedCopy(pa.GetSubordinateTo())
		for _, pu := range pa.GetUnits() {
			av.desired++
			switch pu.GetAgentStatus().GetStatus() {
			case "idle", "executing", "running":
				av.ready++
			}
		}
		v.Applications[pa.GetName()] = av
	}

	for _, pa := range fs.GetApplications() {
		av := v.Applications[pa.GetName()]
		for _, pu := range pa.GetUnits() {
			name := pu.GetName()
			u := units[name]
			// Only one level of nesting: a principal must itself be top level (this also breaks cycles).
			if p, ok := units[u.principal]; ok && p.principal == "" {
				if p.view.Subordinates == nil {
					p.view.Subordinates = map[string]*UnitView{}
				}
				p.view.Subordinates[name] = u.view
				continue
			}
			if av.Units == nil {
				av.Units = make(map[string]*UnitView, len(pa.GetUnits()))
			}
			av.Units[name] = u.view
		}
	}
	return v
}

// NewRemoval is the removal state of an entity: blockedBy as the server gave it, and forceAfter
// (Unix nanoseconds, 0 when not forced) as an RFC 3339 time, in UTC when utc is set.
func NewRemoval(blockedBy []string, forceAfter int64, utc bool) Removal {
	r := Removal{RemovalBlockedBy: cloneOrNil(blockedBy)}
	if forceAfter != 0 {
		r.ForcedRemovalAt = inZone(time.Unix(0, forceAfter), utc).Format(time.RFC3339)
	}
	return r
}

// AppStatus is the status juju status shows for an application: the charm's, else the most
// severe of its units'.
func AppStatus(pa *jujupb.ApplicationStatus) string { return applicationStatus(pa).GetStatus() }

func applicationStatus(pa *jujupb.ApplicationStatus) *jujupb.StatusInfo {
	if pa.GetStatus().GetStatus() != "" {
		return pa.GetStatus()
	}
	return derivedStatus(pa.GetUnits())
}

// relatedApplications builds the relations field of every application in rels.
func relatedApplications(rels []*jujupb.RelationStatus) map[string]EndpointRelations {
	byApp := map[string]EndpointRelations{}
	for _, r := range rels {
		eps := r.GetEndpoints()
		for _, ep := range eps {
			app := ep.GetApplication()
			add := func(related string) {
				if byApp[app] == nil {
					byApp[app] = EndpointRelations{}
				}
				byApp[app][ep.GetName()] = append(byApp[app][ep.GetName()], RelatedApplicationView{
					RelatedApplication: related,
					Interface:          cmp.Or(ep.GetInterface(), r.GetInterface()),
					Scope:              cmp.Or(r.GetScope(), ep.GetScope(), "global"),
					Life:               NotAlive(r.GetLife()),
					RemovalBlockedBy:   cloneOrNil(r.GetBlockedBy()),
				})
			}
			if len(eps) == 1 {
				add(app) // a peer relation
				continue
			}
			for _, other := range eps {
				if other != ep {
					add(other.GetApplication())
				}
			}
		}
	}
	for _, eps := range byApp {
		for _, list := range eps {
			slices.SortStableFunc(list, func(a, b RelatedApplicationView) int {
				return cmp.Or(names.NaturalCompare(a.RelatedApplication, b.RelatedApplication), strings.Compare(a.Interface, b.Interface))
			})
		}
	}
	return byApp
}

// relationRows are the Integration section's rows, sorted by provider then requirer.
func relationRows(rels []*jujupb.RelationStatus) []relationRow {
	rows := make([]relationRow, 0, len(rels))
	for _, r := range rels {
		eps := r.GetEndpoints()
		if len(eps) == 0 {
			continue
		}
		var provider, requirer string
		iface := r.GetInterface()
		for _, ep := range eps {
			name := ep.GetApplication() + ":" + ep.GetName()
			switch ep.GetRole() {
			case "provider":
				provider = name
			case "requirer":
				requirer = name
			case "peer":
				provider, requirer = name, name
			}
			iface = cmp.Or(iface, ep.GetInterface())
		}
		// Endpoints without the expected roles: first is the provider, last the requirer.
		last := eps[len(eps)-1]
		provider = cmp.Or(provider, eps[0].GetApplication()+":"+eps[0].GetName())
		requirer = cmp.Or(requirer, last.GetApplication()+":"+last.GetName())
		kind := "regular"
		switch {
		case len(eps) == 1:
			kind = "peer"
		case r.GetScope() == "container":
			kind = "subordinate"
		}
		rows = append(rows, relationRow{
			provider: provider,
			requirer: requirer,
			iface:    iface,
			kind:     kind,
			message:  removalMessage(NotAlive(r.GetLife()), r.GetBlockedBy()),
		})
	}
	slices.SortStableFunc(rows, func(a, b relationRow) int {
		return cmp.Or(names.NaturalCompare(a.provider, b.provider), names.NaturalCompare(a.requirer, b.requirer))
	})
	return rows
}

// Machine returns the machine or container with id, wherever it nests, or nil.
func (v *View) Machine(id string) *MachineView {
	var find func(ms map[string]*MachineView) *MachineView
	find = func(ms map[string]*MachineView) *MachineView {
		if m, ok := ms[id]; ok {
			return m
		}
		for _, m := range ms {
			if found := find(m.Containers); found != nil {
				return found
			}
		}
		return nil
	}
	return find(v.Machines)
}

// severity orders workload statuses for deriving an application's status.
var severity = map[string]int{
	"error":       7,
	"blocked":     6,
	"maintenance": 5,
	"waiting":     4,
	"active":      3,
	"terminated":  2,
	"unknown":     1,
}

// derivedStatus is the most severe workload status of units (unknown when there are none), as Juju
// shows for an application whose charm set no status.
func derivedStatus(units []*jujupb.UnitStatus) *jujupb.StatusInfo {
	// The first unit in natural order of those of the highest severity.
	var best *jujupb.UnitStatus
	for _, u := range units {
		d := severity[u.GetWorkloadStatus().GetStatus()] - severity[best.GetWorkloadStatus().GetStatus()]
		if best == nil || d > 0 || d == 0 && names.NaturalLess(u.GetName(), best.GetName()) {
			best = u
		}
	}
	if best.GetWorkloadStatus().GetStatus() == "" {
		return &jujupb.StatusInfo{Status: "unknown"}
	}
	return best.GetWorkloadStatus()
}

// charmRef is the charm field: the charm name for charmhub charms, the URL for local ones.
func charmRef(a *jujupb.ApplicationStatus) string {
	url := a.GetCharmUrl()
	if url == "" || strings.HasPrefix(url, "ch:") {
		return a.GetCharmName()
	}
	return url
}

func baseView(b *jujupb.Base) *BaseView {
	if b.GetName() == "" {
		return nil
	}
	// Juju shows a stable channel by its track alone ("22.04").
	return &BaseView{Name: b.GetName(), Channel: strings.TrimSuffix(b.GetChannel(), "/stable")}
}

// DisplayBase is b as the Base column shows it, as Juju's base.DisplayString does: os@channel
// with its risk unless stable ("ubuntu@22.04", "ubuntu@22.04/edge").
func DisplayBase(b *BaseView) string {
	if b == nil {
		return ""
	}
	return b.Name + "@" + strings.TrimSuffix(b.Channel, "/stable")
}

// containerHost is the host of a container id ("0/lxd/1" → "0"), or "" for a machine.
func containerHost(id string) string {
	i := strings.LastIndexByte(id, '/')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(id[:i], '/')
	if j < 0 {
		return ""
	}
	return id[:j]
}

// availabilityZone is the value of availability-zone in hardware ("arch=amd64
// availability-zone=zone-a"), or "".
func availabilityZone(hardware string) string {
	const key = "availability-zone="
	for rest := hardware; ; {
		i := strings.Index(rest, key)
		if i < 0 {
			return ""
		}
		if i == 0 || rest[i-1] == ' ' || rest[i-1] == '\t' {
			z := rest[i+len(key):]
			if end := strings.IndexAny(z, " \t\n"); end >= 0 {
				z = z[:end]
			}
			return z
		}
		rest = rest[i+len(key):]
	}
}

// NotAlive is life as Juju shows it: "" for alive (and unknown), else the life.
func NotAlive(life string) string {
	if life == "alive" {
		return ""
	}
	return life
}

// inZone is t in UTC when utc is set, else in local time.
func inZone(t time.Time, utc bool) time.Time {
	if utc {
		return t.UTC()
	}
	return t.Local()
}

// sinceFormatter formats the since times of statuses (Unix nanoseconds) as sinceLayout, in UTC
// or local time. It is time.Format's output, written directly (a large model has tens of
// thousands of them), and reused for times of the same second as the one before.
type sinceFormatter struct {
	utc  bool
	sec  int64
	text string
}

func (f *sinceFormatter) format(ns int64) string {
	if ns == 0 {
		return ""
	}
	sec := ns / 1e9
	if ns < 0 && ns%1e9 != 0 {
		sec--
	}
	if f.text == "" || sec != f.sec {
		f.sec, f.text = sec, formatSince(inZone(time.Unix(0, ns), f.utc))
	}
	return f.text
}

// formatSince is t.Format(sinceLayout).
func formatSince(t time.Time) string {
	year, month, day := t.Date()
	if year < 1000 || year > 9999 {
		return t.Format(sinceLayout)
	}
	hour, minute, second := t.Clock()
	_, offset := t.Zone()
	b := make([]byte, 0, len("02 Jan 2006 15:04:05-07:00"))
	two := func(n int) { b = append(b, byte('0'+n/10), byte('0'+n%10)) }
	two(day)
	b = append(b, ' ')
	b = append(b, month.String()[:3]...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(year), 10)
	b = append(b, ' ')
	two(hour)
	b = append(b, ':')
	two(minute)
	b = append(b, ':')
	two(second)
	if offset == 0 {
		return string(append(b, 'Z'))
	}
	// As time.Format: the offset in whole minutes, sign and all.
	zone := offset / 60
	if zone < 0 {
		b = append(b, '-')
		zone = -zone
	} else {
		b = append(b, '+')
	}
	two(zone / 60 % 100)
	b = append(b, ':')
	two(zone % 60)
	return string(b)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// truncate cuts s to n characters, the last three being "...".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-len(ellipsis)]) + ellipsis
}

// formatPorts sorts ports per protocol, merges adjacent ones into ranges and prints single ports of
// a protocol together: ["443/tcp","80/tcp","8000-8005/tcp"] → "80,443/tcp 8000-8005/tcp".
// Entries it cannot parse are appended as they are.
func formatPorts(ports []string) string {
	switch len(ports) {
	case 0:
		return ""
	case 1:
		// The common case, without the merging below.
		if s, ok := parsePort(ports[0]); ok {
			if s.from == s.to {
				return strconv.Itoa(s.from) + "/" + s.proto
			}
			return strconv.Itoa(s.from) + "-" + strconv.Itoa(s.to) + "/" + s.proto
		}
	}
	spans := make([]portSpan, 0, len(ports))
	var other []string
	for _, p := range ports {
		if s, ok := parsePort(p); ok {
			spans = append(spans, s)
		} else {
			other = append(other, p)
		}
	}
	slices.SortFunc(spans, func(a, b portSpan) int {
		return cmp.Or(strings.Compare(a.proto, b.proto), cmp.Compare(a.from, b.from))
	})
	// Merge overlapping and adjacent spans of a protocol.
	merged := spans[:0]
	for _, s := range spans {
		if n := len(merged); n > 0 && merged[n-1].proto == s.proto && s.from <= merged[n-1].to+1 {
			merged[n-1].to = max(merged[n-1].to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
	}
	for i := 0; i < len(merged); {
		proto := merged[i].proto
		j := i
		for j < len(merged) && merged[j].proto == proto {
			j++
		}
		// The single ports of the protocol together, then its ranges.
		singles := 0
		for _, s := range merged[i:j] {
			if s.from != s.to {
				continue
			}
			if singles == 0 {
				sep()
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(s.from))
			singles++
		}
		if singles > 0 {
			b.WriteString("/" + proto)
		}
		for _, s := range merged[i:j] {
			if s.from != s.to {
				sep()
				b.WriteString(strconv.Itoa(s.from) + "-" + strconv.Itoa(s.to) + "/" + proto)
			}
		}
		i = j
	}
	for _, o := range other {
		sep()
		b.WriteString(o)
	}
	return b.String()
}

type portSpan struct {
	from, to int
	proto    string
}

// parsePort reads "80/tcp" or "8000-8005/tcp".
func parsePort(p string) (portSpan, bool) {
	nums, proto, ok := strings.Cut(p, "/")
	if !ok || proto == "" {
		return portSpan{}, false
	}
	fromS, toS, isRange := strings.Cut(nums, "-")
	from, err := strconv.Atoi(fromS)
	if err != nil || from < 0 {
		return portSpan{}, false
	}
	to := from
	if isRange {
		if to, err = strconv.Atoi(toS); err != nil || to < from {
			return portSpan{}, false
		}
	}
	return portSpan{from: from, to: to, proto: proto}, true
}

// sortPorts returns a copy of ports in Juju's order: by protocol, then port range ("80/tcp",
// "443/tcp", "53/udp"); entries it cannot parse go last, naturally sorted. Nil when empty.
func sortPorts(ports []string) []string {
	if len(ports) == 0 {
		return nil
	}
	c := slices.Clone(ports)
	if len(c) == 1 {
		return c
	}
	slices.SortStableFunc(c, func(a, b string) int {
		pa, okA := parsePort(a)
		pb, okB := parsePort(b)
		switch {
		case okA && okB:
			return cmp.Or(strings.Compare(pa.proto, pb.proto), cmp.Compare(pa.from, pb.from), cmp.Compare(pa.to, pb.to))
		case okA:
			return -1
		case okB:
			return 1
		}
		return names.NaturalCompare(a, b)
	})
	return c
}

// cloneOrNil returns a copy of s, or nil when empty.
func cloneOrNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// sortedCopy returns s naturally sorted, or nil when empty.
func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	c := slices.Clone(s)
	slices.SortFunc(c, names.NaturalCompare)
	return c
}

// sortedKeys returns m's keys in natural order ("app/2" before "app/10").
func sortedKeys[V any](m map[string]V) []string {
	return output.SortedNatural(m)
}

// exposedEndpoints maps the application's expose rules by endpoint; nil when not exposed.
func exposedEndpoints(eps []*jujupb.ExposedEndpoint) map[string]*ExposedEndpointView {
	if len(eps) == 0 {
		return nil
	}
	out := make(map[string]*ExposedEndpointView, len(eps))
	for _, e := range eps {
		out[e.GetEndpoint()] = &ExposedEndpointView{ExposeToSpaces: e.GetToSpaces(), ExposeToCIDRs: e.GetToCidrs()}
	}
	return out
}
