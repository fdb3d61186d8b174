package status

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/output"
)

// WithRelations makes Table include the Integration section (juju status --relations).
func (v *View) WithRelations(show bool) *View {
	v.showRelations = show
	return v
}

// WithColor makes Table, oneline and summary colour their output when s has colour enabled
// (json and yaml never are): statuses in Juju's colours, headers bold, addresses cyan, ports
// bright magenta, messages grey.
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
	header := []string{"Model", "Controller", "Cloud/Region", "Version", "Timestamp"}
	row := []string{m.Name, m.Controller, cloud, m.Version, v.Controller.Timestamp}
	var notes []string
	for _, n := range []string{m.ModelStatus.Message, m.Warning} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 {
		header = append(header, "Notes")
		row = append(row, truncate(strings.Join(notes, "; "), maxMessageLen))
	}
	return output.Table{Header: output.Headers(v.streams, header...), Rows: [][]string{row}}
}

func (v *View) appTable() output.Table {
	t := output.Table{
		Header:     output.Headers(v.streams, "App", "Version", "Status", "Scale", "Charm", "Channel", "Rev", "Exposed", "Message"),
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
			output.Paint(v.streams, output.Grey, msg),
		})
	}
	return t
}

// namedUnit is a unit with its name, for sorting.
type namedUnit struct {
	name string
	unit *UnitView
}

// sortedUnits returns units in natural order of their names.
func sortedUnits(units map[string]*UnitView) []namedUnit {
	list := make([]namedUnit, 0, len(units))
	for name, u := range units {
		list = append(list, namedUnit{name, u})
	}
	output.SortNatural(list, func(u namedUnit) string { return u.name })
	return list
}

func (v *View) unitTable() output.Table {
	t := output.Table{Header: output.Headers(v.streams, "Unit", "Workload", "Agent", "Machine", "Public address", "Ports", "Message")}
	// Units of an application mostly open the same ports: format each set once in a row.
	var lastPorts []string
	lastText := ""
	ports := func(p []string) string {
		if !slices.Equal(p, lastPorts) || lastPorts == nil {
			lastPorts, lastText = p, output.Paint(v.streams, output.BrightMagenta, formatPorts(p))
		}
		return lastText
	}
	var cells rowCells
	var add func(name string, u *UnitView, level int)
	add = func(name string, u *UnitView, level int) {
		if u.Leader {
			name += "*"
		}
		if level > 0 {
			name = strings.Repeat("  ", level) + name
		}
		ws, as := u.WorkloadStatus.Current, u.JujuStatus.Current
		t.Rows = append(t.Rows, cells.row(
			name,
			output.Colorize(v.streams, ws, ws),
			output.Colorize(v.streams, as, as),
			u.Machine,
			output.Paint(v.streams, output.Cyan, u.PublicAddress),
			ports(u.OpenPorts),
			output.Paint(v.streams, output.Grey, unitCell(u)),
		))
		if len(u.Subordinates) > 0 {
			for _, sub := range sortedUnits(u.Subordinates) {
				add(sub.name, sub.unit, level+1)
			}
		}
	}
	// Principal units of all applications, in one natural order (Juju's).
	n, rows := 0, 0
	for _, a := range v.Applications {
		n += len(a.Units)
		for _, u := range a.Units {
			rows += 1 + len(u.Subordinates)
		}
	}
	all := make([]namedUnit, 0, n)
	for _, a := range v.Applications {
		for name, u := range a.Units {
			all = append(all, namedUnit{name, u})
		}
	}
	output.SortNatural(all, func(u namedUnit) string { return u.name })
	t.Rows = make([][]string, 0, rows)
	cells = newRowCells(rows, 7)
	for _, u := range all {
		add(u.name, u.unit, 0)
	}
	return t
}

// MachineTable is the Machine section: every machine and container, naturally sorted; it has no
// rows on a k8s model.
func (v *View) MachineTable() output.Table {
	t := output.Table{Header: output.Headers(v.streams, "Machine", "State", "Address", "Inst id", "Base", "AZ", "Message")}
	if v.Model.Type == "caas" {
		return t
	}
	type namedMachine struct {
		id string
		m  *MachineView
	}
	n := len(v.Machines)
	for _, m := range v.Machines {
		n += len(m.Containers) // and theirs, if any: append grows then
	}
	all := make([]namedMachine, 0, n)
	var collect func(ms map[string]*MachineView)
	collect = func(ms map[string]*MachineView) {
		for id, m := range ms {
			all = append(all, namedMachine{id, m})
			collect(m.Containers)
		}
	}
	collect(v.Machines)
	output.SortNatural(all, func(m namedMachine) string { return m.id })
	t.Rows = make([][]string, 0, len(all))
	cells := newRowCells(len(all), 7)
	// Machines mostly share a base: print each once in a row.
	var lastBase BaseView
	lastBaseText := ""
	for _, nm := range all {
		m := nm.m
		st := m.JujuStatus.Current
		base := ""
		if m.Base != nil {
			if *m.Base != lastBase || lastBaseText == "" {
				lastBase, lastBaseText = *m.Base, DisplayBase(m.Base)
			}
			base = lastBaseText
		}
		t.Rows = append(t.Rows, cells.row(
			nm.id,
			output.Colorize(v.streams, st, st),
			output.Paint(v.streams, output.Cyan, m.DNSName),
			m.InstanceID,
			base,
			availabilityZone(m.Hardware),
			output.Paint(v.streams, output.Grey, machineMessage(m)),
		))
	}
	return t
}

// rowCells hands out the rows of a table from blocks of cells, sized for the table when it is
// known (a status of 10,000 units has 20,000 rows).
type rowCells struct {
	cells []string
	ncols int
}

func newRowCells(rows, ncols int) rowCells {
	return rowCells{cells: make([]string, rows*ncols), ncols: ncols}
}

// row returns values as a row.
func (c *rowCells) row(values ...string) []string {
	if len(c.cells) < len(values) {
		c.cells = make([]string, 64*len(values))
	}
	r := c.cells[:len(values):len(values)]
	copy(r, values)
	c.cells = c.cells[len(values):]
	return r
}

// machineMessage is the Message cell of a machine: the instance's message, the agent's when it
// is in error, or for a machine that is not alive why it is not gone yet.
func machineMessage(m *MachineView) string {
	if m.JujuStatus.Life != "" {
		return removalMessage(m.JujuStatus.Life, m.RemovalBlockedBy)
	}
	msg := m.MachineStatus.Message
	if m.JujuStatus.Current == "error" && m.JujuStatus.Message != "" {
		msg = m.JujuStatus.Message
	}
	return truncate(msg, maxMessageLen)
}

func (v *View) relationTable() output.Table {
	t := output.Table{Header: output.Headers(v.streams, "Integration provider", "Requirer", "Interface", "Type", "Message")}
	// The ":endpoint" part is magenta, as in Juju.
	endpoint := func(ep string) string {
		app, name, ok := strings.Cut(ep, ":")
		if !ok {
			return ep
		}
		return app + output.Paint(v.streams, output.Magenta, ":"+name)
	}
	for _, r := range relationRows(v.relations) {
		t.Rows = append(t.Rows, []string{endpoint(r.provider), endpoint(r.requirer), r.iface, r.kind,
			output.Paint(v.streams, output.Grey, r.message)})
	}
	return t
}

// removalMessage is the Message cell of an entity that is not alive: its life, then what its
// removal waits for. It is never cut: it is the one place the reason shows.
func removalMessage(life string, blockedBy []string) string {
	if life == "" || len(blockedBy) == 0 {
		return life
	}
	return life + ": " + strings.Join(blockedBy, "; ")
}

// unitCell is the unit's Message cell: unitMessage, cut at 120 characters unless it says why a
// unit that is not alive is not gone yet.
func unitCell(u *UnitView) string {
	if u.JujuStatus.Life != "" {
		return unitMessage(u)
	}
	return truncate(unitMessage(u), maxMessageLen)
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
