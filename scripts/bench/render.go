package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/output"
)

// renderUnits is the model size of the status rendering figure.
const renderUnits = 10_000

// statusRenderRow measures `juju status` tabular rendering of a 10,000-unit model in this process
// (the controller is not involved: this is the CLI's formatting alone, from the decoded response to
// the bytes on stdout), against text/tabwriter (padding 2) writing the very same cells, measured in
// the same run. The render includes building the view (sorting, ports, messages) and the tables.
func statusRenderRow() row {
	fs := syntheticStatus(renderUnits)
	now := time.Unix(0, fs.GetControllerTime())
	var out bytes.Buffer
	render := median(11, func() error {
		out.Reset()
		return output.Write(&out, output.Tabular, status.NewView(fs, "local", now, true))
	})
	tables := status.NewView(fs, "local", now, true).Table()
	var base bytes.Buffer
	baseline := median(11, func() error {
		base.Reset()
		return tabwriterTables(&base, tables)
	})
	lines := strings.Count(out.String(), "\n")
	notes = append(notes, fmt.Sprintf("Status rendering: a synthetic model of 100 applications × 100 units (10,000 units, each on its own "+
		"machine, with addresses, ports and messages) rendered to tabular in-process: %d lines, %d bytes, median of 11 runs %s; "+
		"text/tabwriter writing the same cells (padding 2): %s (%d bytes).",
		lines, out.Len(), fmtDur(render), fmtDur(baseline), base.Len()))
	return row{what: "juju status tabular render, 10,000 units", budget: "≤ 2× text/tabwriter", median: render, ratio: ratio(render, baseline)}
}

// tabwriterTables writes tables the way Juju's own tabwriter does (minwidth 0, tabwidth 1,
// padding 2, spaces), a blank line between sections.
func tabwriterTables(w io.Writer, tables []output.Table) error {
	tw := tabwriter.NewWriter(w, 0, 1, 2, ' ', 0)
	first := true
	for _, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if !first {
			if _, err := io.WriteString(tw, "\n"); err != nil {
				return err
			}
		}
		first = false
		for _, r := range append([][]string{t.Header}, t.Rows...) {
			for i, c := range r {
				if i > 0 {
					if _, err := io.WriteString(tw, "\t"); err != nil {
						return err
					}
				}
				if _, err := io.WriteString(tw, c); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(tw, "\n"); err != nil {
				return err
			}
		}
	}
	return tw.Flush()
}

// syntheticStatus is a model of units/100 applications of 100 units each, every unit on a machine
// of its own: the shape of a large deployment, with the cells status really fills.
func syntheticStatus(units int) *jujupb.FullStatusResponse {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Statuses changed at different times over the last day, as in a model that lives.
	var changes int64
	si := func(st, msg string) *jujupb.StatusInfo {
		changes++
		return &jujupb.StatusInfo{Status: st, Message: msg, Since: now.Add(-time.Duration(changes*2_718_281_828) % (24 * time.Hour)).UnixNano()}
	}
	jammy := &jujupb.Base{Name: "ubuntu", Channel: "22.04"}
	fs := &jujupb.FullStatusResponse{
		Model: &jujupb.ModelStatus{Name: "big", Controller: "local", Cloud: "localhost", Region: "localhost",
			Version: "0.1.0", Type: "iaas", Status: si("available", "")},
		ControllerTime: now.UnixNano(),
	}
	perApp := 100
	for a := 0; a*perApp < units; a++ {
		name := fmt.Sprintf("app%d", a)
		app := &jujupb.ApplicationStatus{
			Name: name, CharmName: name, CharmUrl: "local:" + name + "-3", CharmRev: 3, CharmOrigin: "local",
			Base: jammy, Life: "alive", WorkloadVersion: "2.4.1", Exposed: a%2 == 0,
		}
		for u := 0; u < perApp && a*perApp+u < units; u++ {
			n := a*perApp + u
			id := fmt.Sprint(n)
			addr := fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
			fs.Machines = append(fs.Machines, &jujupb.MachineStatus{
				Id: id, Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-" + id, DnsName: addr,
				Hardware:    "arch=amd64 cores=2 mem=4096M availability-zone=zone-" + string(rune('a'+n%3)),
				AgentStatus: si("started", ""), InstanceStatus: si("running", "Running"),
			})
			ws, msg := si("active", "ready"), []string{"80/tcp", "443/tcp"}
			if u%10 == 9 {
				ws = si("waiting", "waiting for the database to accept connections on its primary address")
				msg = []string{"8000-8005/tcp"}
			}
			app.Units = append(app.Units, &jujupb.UnitStatus{
				Name: fmt.Sprintf("%s/%d", name, u), Machine: id, Life: "alive", PublicAddress: addr,
				Leader: u == 0, OpenPorts: msg, AgentStatus: si("idle", ""), WorkloadStatus: ws,
			})
		}
		app.UnitCount = int32(len(app.Units))
		fs.Applications = append(fs.Applications, app)
	}
	return fs
}
