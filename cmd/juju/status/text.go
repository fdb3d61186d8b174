package status

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/output"
)

// WriteText renders the formats of juju status besides json, yaml and tabular: oneline (also
// short and line) and summary.
func (v *View) WriteText(w io.Writer, f output.Format) error {
	bw := bufio.NewWriter(w)
	switch f {
	case output.Oneline, output.Short, output.Line:
		v.writeOneline(bw)
	case output.Summary:
		v.writeSummary(bw)
	default:
		return fmt.Errorf("format %q not supported", f)
	}
	return bw.Flush()
}

// writeOneline writes a line per unit, application by application, subordinates two spaces
// further in under their principal, as Juju's:
//
//   - mysql/0: 10.0.0.10 (agent:idle, workload:active) 3306/tcp
func (v *View) writeOneline(w *bufio.Writer) {
	paint := func(c output.Color, s string) string { return output.Paint(v.streams, c, s) }
	var unit func(name string, u *UnitView, level int)
	unit = func(name string, u *UnitView, level int) {
		as, ws := u.JujuStatus.Current, u.WorkloadStatus.Current
		fmt.Fprintf(w, "%s- %s: %s (%s:%s, %s:%s)", strings.Repeat("  ", level), paint(output.Green, name),
			paint(output.Cyan, u.PublicAddress),
			paint(output.Bold, "agent"), output.Colorize(v.streams, as, as),
			paint(output.Bold, "workload"), output.Colorize(v.streams, ws, ws))
		if ports := formatPorts(u.OpenPorts); ports != "" {
			w.WriteString(" " + paint(output.BrightMagenta, ports))
		}
		w.WriteByte('\n')
		for _, sub := range sortedUnits(u.Subordinates) {
			unit(sub.name, sub.unit, level+1)
		}
	}
	for _, app := range sortedKeys(v.Applications) {
		for _, u := range sortedUnits(v.Applications[app].Units) {
			unit(u.name, u.unit, 0)
		}
	}
}

// summaryEntry is one line of the summary: a key right-aligned, a value, and an optional note.
type summaryEntry struct {
	key, value, note string
	// keyColor and valueColor paint the key and value; blank is an empty separator line.
	keyColor, valueColor output.Color
	blank                bool
}

// writeSummary writes Juju's summary: the subnets the model's addresses are on, the ports its
// units open, then counts of machines and units per status, the applications with how many are
// exposed, and remote applications (none: this controller has no cross-model relations).
//
//	Running on subnets:  10.0.0.0/8
//	 Utilizing ports:    80,443/tcp 3306/tcp
//	      # Machines:  (2)
//	         started:   2
//	...
func (v *View) writeSummary(w *bufio.Writer) {
	var subnets []netip.Prefix
	addSubnet := func(addr string) {
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return // host names are not resolved: rendering does no I/O
		}
		for _, s := range subnets {
			if s.Contains(ip) {
				return
			}
		}
		subnets = append(subnets, defaultPrefix(ip))
	}

	machines, machineCount := map[string]int{}, 0
	var walkMachines func(ms map[string]*MachineView)
	walkMachines = func(ms map[string]*MachineView) {
		for _, id := range sortedKeys(ms) {
			m := ms[id]
			addSubnet(m.DNSName)
			st := m.JujuStatus.Current
			if st == "" {
				st = "pending"
			}
			machines[st]++
			machineCount++
			walkMachines(m.Containers)
		}
	}
	walkMachines(v.Machines)

	units, unitCount := map[string]int{}, 0
	var ports []string
	var walkUnits func(us map[string]*UnitView)
	walkUnits = func(us map[string]*UnitView) {
		for _, u := range sortedUnits(us) {
			addSubnet(u.unit.PublicAddress)
			ports = append(ports, u.unit.OpenPorts...)
			units[u.unit.WorkloadStatus.Current]++
			unitCount++
			walkUnits(u.unit.Subordinates)
		}
	}
	apps := sortedKeys(v.Applications)
	for _, name := range apps {
		walkUnits(v.Applications[name].Units)
	}

	nets := make([]string, len(subnets))
	for i, s := range subnets {
		nets[i] = s.String()
	}
	header := [][2]string{
		{"Running on subnets:", output.Paint(v.streams, output.Cyan, strings.Join(nets, ", "))},
		{" Utilizing ports:", output.Paint(v.streams, output.BrightMagenta, formatPorts(dedupe(sortPorts(ports))))},
	}
	keyWidth := 0
	for _, h := range header {
		keyWidth = max(keyWidth, len(h[0]))
	}
	for _, h := range header {
		line := h[0] + strings.Repeat(" ", keyWidth-len(h[0])+2) + h[1]
		w.WriteString(strings.TrimRight(line, " ") + "\n")
	}

	var entries []summaryEntry
	count := func(title string, n int, byStatus map[string]int) {
		entries = append(entries, summaryEntry{key: title, value: "(" + strconv.Itoa(n) + ")", keyColor: output.Bold})
		for _, st := range sortedKeys(byStatus) {
			// The count's digits under the count in parentheses.
			entries = append(entries, summaryEntry{key: st + ":", value: " " + strconv.Itoa(byStatus[st]) + " ",
				keyColor: output.StatusColor(st)})
		}
		entries = append(entries, summaryEntry{blank: true})
	}
	count("# Machines:", machineCount, machines)
	count("# Units:", unitCount, units)
	entries = append(entries, summaryEntry{key: "# Applications:", value: "(" + strconv.Itoa(len(apps)) + ")", keyColor: output.Bold})
	for _, name := range apps {
		exposed := 0
		if v.Applications[name].Exposed {
			exposed = 1
		}
		// As Juju: per application, how many of it are exposed.
		entries = append(entries, summaryEntry{key: name, value: strconv.Itoa(exposed) + "/1", note: "exposed", keyColor: output.Green})
	}
	entries = append(entries, summaryEntry{blank: true})
	entries = append(entries, summaryEntry{key: "# Remote:", value: "(0)", keyColor: output.Bold})

	keyWidth, valueWidth := 0, 0
	for _, e := range entries {
		keyWidth, valueWidth = max(keyWidth, len(e.key)), max(valueWidth, len(e.value))
	}
	for _, e := range entries {
		if e.blank {
			w.WriteByte('\n')
			continue
		}
		line := strings.Repeat(" ", keyWidth-len(e.key)+2) + output.Paint(v.streams, e.keyColor, e.key) +
			strings.Repeat(" ", valueWidth-len(e.value)+2) + e.value
		if e.note != "" {
			line += "  " + e.note
		}
		w.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// defaultPrefix is the subnet of ip by its class, as Juju's summary shows it: 10.0.0.0/8,
// 172.16.0.0/16, 192.168.1.0/24; an IPv6 address's /64.
func defaultPrefix(ip netip.Addr) netip.Prefix {
	bits := 64
	if ip.Is4() {
		switch b := ip.As4()[0]; {
		case b < 0x80:
			bits = 8
		case b < 0xc0:
			bits = 16
		default:
			bits = 24
		}
	}
	p, _ := ip.Prefix(bits)
	return p
}

// dedupe drops repeats from a sorted list.
func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
