package status

import (
	"cmp"
	"github.com/jujuclone/juju/core/names"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
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
	Life        string    `json:"life,omitempty" yaml:"life,omitempty"`

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
	// Juju cuts the App message at 120 characters and the version at 15.
	maxMessageLen = 120
	maxVersionLen = 15
	ellipsis      = "..."
)

// NewView builds the status view of fs. controllerName is the client's name for the controller (the
// server's is used when empty); the timestamp is the controller time of fs, or now when fs has none;
// times are shown in UTC when utc is set, else in local time.
func NewView(fs *jujupb.FullStatusResponse, controllerName string, now time.Time, utc bool) *View {
	since := func(ns int64) string {
		if ns == 0 {
			return ""
		}
		return inZone(time.Unix(0, ns), utc).Format(sinceLayout)
	}
	status := func(si *jujupb.StatusInfo, life string) StatusView {
		return StatusView{Current: si.GetStatus(), Message: si.GetMessage(), Since: since(si.GetSince()), Life: NotAlive(life)}
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
		},
		Machines:     map[string]*MachineView{},
		Applications: map[string]*ApplicationView{},
		Controller:   ControllerView{Timestamp: inZone(ts, utc).Format(timestampLayout)},
	}

	machines := map[string]*MachineView{}
	for _, pm := range fs.GetMachines() {
		mv := &MachineView{
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
		if net.ParseIP(mv.DNSName) != nil {
			mv.IPAddresses = []string{mv.DNSName}
		}
		machines[pm.GetId()] = mv
	}
	for id, mv := range machines {
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
		app       string
		principal string
	}
	units := map[string]unitEntry{}
	for _, pa := range fs.GetApplications() {
		for _, pu := range pa.GetUnits() {
			uv := &UnitView{
				WorkloadStatus: status(pu.GetWorkloadStatus(), ""),
				JujuStatus:     status(pu.GetAgentStatus(), pu.GetLife()),
				Leader:         pu.GetLeader(),
				OpenPorts:      sortPorts(pu.GetOpenPorts()),
				PublicAddress:  pu.GetPublicAddress(),
				Removal:        NewRemoval(pu.GetBlockedBy(), pu.GetForceAfter(), utc),
			}
			if pu.GetPrincipal() == "" {
				uv.Machine = pu.GetMachine()
			}
			units[pu.GetName()] = unitEntry{view: uv, app: pa.GetName(), principal: pu.GetPrincipal()}
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

	for name, u := range units {
		// Only one level of nesting: a principal must itself be top level (this also breaks cycles).
		if p, ok := units[u.principal]; ok && p.principal == "" {
			if p.view.Subordinates == nil {
				p.view.Subordinates = map[string]*UnitView{}
			}
			p.view.Subordinates[name] = u.view
			continue
		}
		av := v.Applications[u.app]
		if av.Units == nil {
			av.Units = map[string]*UnitView{}
		}
		av.Units[name] = u.view
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

// WithRelations makes Table include the Integration section (juju status --relations).
func (v *View) WithRelations(show bool) *View {
	v.showRelations = show
	return v
}

// WithColor makes Table colour statuses when s has colour enabled.
func (v *View) WithColor(s *output.Streams) *View {
	v.streams = s
	return v
}

// Empty reports whether the model has no machines and no applications.
func (v *View) Empty() bool {
	return len(v.Machines) == 0 && len(v.Applications) == 0
}

// Table returns the Model, App, Unit and Machine sections, and the Integration section when
// asked for (WithRelations); sections without rows are left out.
func (v *View) Table() []output.Table {
	tables := []output.Table{v.modelTable(), v.appTable(), v.unitTable(), v.MachineTable()}
	if v.showRelations {
		tables = append(tables, v.relationTable())
	}
	return tables
}

func (v *View) modelTable() output.Table {
	m := v.Model
	cloud := m.Cloud
	if m.Region != "" {
		cloud += "/" + m.Region
	}
	t := output.Table{
		Header: []string{"Model", "Controller", "Cloud/Region", "Version", "Timestamp"},
		Rows:   [][]string{{m.Name, m.Controller, cloud, m.Version, v.Controller.Timestamp}},
	}
	if msg := m.ModelStatus.Message; msg != "" {
		t.Header = append(t.Header, "Notes")
		t.Rows[0] = append(t.Rows[0], msg)
	}
	return t
}

func (v *View) appTable() output.Table {
	t := output.Table{
		Header:     []string{"App", "Version", "Status", "Scale", "Charm", "Channel", "Rev", "Exposed", "Message"},
		RightAlign: []int{3, 6},
	}
	for _, name := range sortedKeys(v.Applications) {
		a := v.Applications[name]
		scale := strconv.Itoa(a.desired)
		if a.ready != a.desired {
			scale = output.Paint(v.streams, output.Yellow, strconv.Itoa(a.ready)+"/"+scale)
		}
		exposed := "no"
		if a.Exposed {
			exposed = output.Paint(v.streams, output.Green, "yes")
		}
		st := a.ApplicationStatus.Current
		msg := truncate(a.ApplicationStatus.Message, maxMessageLen)
		if a.Life != "" {
			msg = removalMessage(a.Life, a.RemovalBlockedBy)
		}
		t.Rows = append(t.Rows, []string{
			name,
			truncate(firstLine(a.Version), maxVersionLen),
			output.Colorize(v.streams, st, st),
			scale,
			a.CharmName,
			"", // charm channel: local charms have none
			strconv.Itoa(a.CharmRev),
			exposed,
			msg,
		})
	}
	return t
}

func (v *View) unitTable() output.Table {
	t := output.Table{Header: []string{"Unit", "Workload", "Agent", "Machine", "Public address", "Ports", "Message"}}
	var add func(name string, u *UnitView, level int)
	add = func(name string, u *UnitView, level int) {
		if u.Leader {
			name += "*"
		}
		ws, as := u.WorkloadStatus.Current, u.JujuStatus.Current
		t.Rows = append(t.Rows, []string{
			strings.Repeat("  ", level) + name,
			output.Colorize(v.streams, ws, ws),
			output.Colorize(v.streams, as, as),
			u.Machine,
			u.PublicAddress,
			formatPorts(u.OpenPorts),
			unitMessage(u),
		})
		for _, sub := range sortedKeys(u.Subordinates) {
			add(sub, u.Subordinates[sub], level+1)
		}
	}
	all := map[string]*UnitView{}
	for _, a := range v.Applications {
		for name, u := range a.Units {
			all[name] = u
		}
	}
	for _, name := range sortedKeys(all) {
		add(name, all[name], 0)
	}
	return t
}

// MachineTable is the Machine section: every machine and container, naturally sorted; it has no
// rows on a k8s model.
func (v *View) MachineTable() output.Table {
	t := output.Table{Header: []string{"Machine", "State", "Address", "Inst id", "Base", "AZ", "Message"}}
	if v.Model.Type == "caas" {
		return t
	}
	all := map[string]*MachineView{}
	var collect func(ms map[string]*MachineView)
	collect = func(ms map[string]*MachineView) {
		for id, m := range ms {
			all[id] = m
			collect(m.Containers)
		}
	}
	collect(v.Machines)
	for _, id := range sortedKeys(all) {
		m := all[id]
		st := m.JujuStatus.Current
		msg := m.MachineStatus.Message
		if st == "error" && m.JujuStatus.Message != "" {
			msg = m.JujuStatus.Message
		}
		if m.JujuStatus.Life != "" {
			msg = removalMessage(m.JujuStatus.Life, m.RemovalBlockedBy)
		}
		t.Rows = append(t.Rows, []string{
			id,
			output.Colorize(v.streams, st, st),
			m.DNSName,
			m.InstanceID,
			DisplayBase(m.Base),
			availabilityZone(m.Hardware),
			msg,
		})
	}
	return t
}

func (v *View) relationTable() output.Table {
	t := output.Table{Header: []string{"Integration provider", "Requirer", "Interface", "Type", "Message"}}
	for _, r := range relationRows(v.relations) {
		t.Rows = append(t.Rows, []string{r.provider, r.requirer, r.iface, r.kind, r.message})
	}
	return t
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

// removalMessage is the Message cell of an entity that is not alive: its life, then what its
// removal waits for. It is never cut: it is the one place the reason shows.
func removalMessage(life string, blockedBy []string) string {
	if life == "" || len(blockedBy) == 0 {
		return life
	}
	return life + ": " + strings.Join(blockedBy, "; ")
}

// unitMessage is the Message cell: for a unit that is not alive, why it is not gone yet; else the
// workload message, prefixed by what the agent is running, or the agent's message while it is
// allocating and the workload has none.
func unitMessage(u *UnitView) string {
	if u.JujuStatus.Life != "" {
		return removalMessage(u.JujuStatus.Life, u.RemovalBlockedBy)
	}
	msg := u.WorkloadStatus.Message
	switch u.JujuStatus.Current {
	case "allocating":
		if msg == "" {
			msg = u.JujuStatus.Message
		}
	case "executing":
		if doing := agentDoing(u.JujuStatus.Message); doing != "" {
			msg = strings.TrimSpace("(" + doing + ") " + msg)
		}
	}
	return msg
}

var (
	hookRe   = regexp.MustCompile(`running ([a-z0-9][a-z0-9-]*) hook`)
	actionRe = regexp.MustCompile(`running action (.+)`)
)

// agentDoing is the hook or action named in an executing agent's message.
func agentDoing(agentMessage string) string {
	if m := hookRe.FindStringSubmatch(agentMessage); m != nil {
		return m[1]
	}
	if m := actionRe.FindStringSubmatch(agentMessage); m != nil {
		return m[1]
	}
	return ""
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
	sorted := slices.Clone(units)
	slices.SortFunc(sorted, func(a, b *jujupb.UnitStatus) int { return names.NaturalCompare(a.GetName(), b.GetName()) })
	var best *jujupb.StatusInfo
	for _, u := range sorted {
		ws := u.GetWorkloadStatus()
		if best == nil || severity[ws.GetStatus()] > severity[best.GetStatus()] {
			best = ws
		}
	}
	if best.GetStatus() == "" {
		return &jujupb.StatusInfo{Status: "unknown"}
	}
	return best
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

// DisplayBase is b as the Base column shows it: os@track, without risk ("ubuntu@22.04").
func DisplayBase(b *BaseView) string {
	if b == nil {
		return ""
	}
	track, _, _ := strings.Cut(b.Channel, "/")
	return b.Name + "@" + track
}

// containerHost is the host of a container id ("0/lxd/1" → "0"), or "" for a machine.
func containerHost(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], "/")
}

func availabilityZone(hardware string) string {
	for _, f := range strings.Fields(hardware) {
		if z, ok := strings.CutPrefix(f, "availability-zone="); ok {
			return z
		}
	}
	return ""
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
	type span struct{ from, to int }
	byProto := map[string][]span{}
	var other []string
	for _, p := range ports {
		s, ok := parsePort(p)
		if !ok {
			other = append(other, p)
			continue
		}
		byProto[s.proto] = append(byProto[s.proto], span{s.from, s.to})
	}
	var out []string
	for _, proto := range slices.Sorted(maps.Keys(byProto)) {
		spans := byProto[proto]
		slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
		var merged []span
		for _, s := range spans {
			if n := len(merged); n > 0 && s.from <= merged[n-1].to+1 {
				merged[n-1].to = max(merged[n-1].to, s.to)
				continue
			}
			merged = append(merged, s)
		}
		var singles, ranges []string
		for _, s := range merged {
			if s.from == s.to {
				singles = append(singles, strconv.Itoa(s.from))
			} else {
				ranges = append(ranges, strconv.Itoa(s.from)+"-"+strconv.Itoa(s.to)+"/"+proto)
			}
		}
		if len(singles) > 0 {
			out = append(out, strings.Join(singles, ",")+"/"+proto)
		}
		out = append(out, ranges...)
	}
	return strings.Join(append(out, other...), " ")
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

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, names.NaturalCompare)
	return keys
}
