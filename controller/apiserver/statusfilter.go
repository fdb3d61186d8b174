package apiserver

import (
	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/selector"
	"github.com/jujuclone/juju/core/status"
)

// filter keeps what the selectors of "juju status" match (core/selector): applications, units
// and machines by name ("*" wildcards; a machine includes its containers) or by status value (a
// unit's workload or agent status, a machine's agent or instance status, an application's
// status). A matched unit brings its machine, its application, its principal and its
// subordinates; a matched machine brings its units; an application matched by name brings all
// its units. As in Juju, related applications are not added: a relation is kept when one of its
// applications matched itself (by name, or by one of its units' names or statuses), not when it
// was only brought in by a matched machine (Juju's "discovered" applications).
func filter(resp *pb.FullStatusResponse, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	sels, err := selector.ParseAll(patterns)
	if err != nil {
		return apierr.Errorf(apierr.NotValid, "%v", err)
	}
	named := func(name string) bool {
		for _, s := range sels {
			if s.MatchName(name) {
				return true
			}
		}
		return false
	}
	inStatus := func(infos ...*pb.StatusInfo) bool {
		for _, s := range sels {
			for _, si := range infos {
				if s.MatchStatus(si.GetStatus()) {
					return true
				}
			}
		}
		return false
	}

	keepMachines := map[string]bool{}
	for _, m := range resp.Machines {
		for _, s := range sels {
			if s.MatchMachine(m.Id) {
				keepMachines[m.Id] = true
			}
		}
		if inStatus(m.AgentStatus, m.InstanceStatus) {
			keepMachines[m.Id] = true
		}
	}

	matched := map[string]bool{}
	// direct holds the units matched by name or status, not through their machine.
	direct := map[string]bool{}
	principal := map[string]string{}
	appOf := map[string]string{}
	for _, a := range resp.Applications {
		appNamed := named(a.Name)
		for _, u := range a.Units {
			principal[u.Name] = u.Principal
			appOf[u.Name] = a.Name
			if appNamed || named(u.Name) || inStatus(u.WorkloadStatus, u.AgentStatus) {
				direct[u.Name] = true
			}
			if direct[u.Name] || keepMachines[u.Machine] {
				matched[u.Name] = true
			}
		}
	}
	// An application matches itself when named, in the status, or when one of its units matched
	// directly, or is the principal or a subordinate of a unit that did.
	appMatched := map[string]bool{}
	for u, p := range principal {
		if direct[u] || direct[p] {
			appMatched[appOf[u]] = true
		}
		if direct[u] && p != "" {
			appMatched[appOf[p]] = true
		}
	}
	// A matched subordinate brings its principal, a matched principal all its subordinates (not
	// the other subordinates of a principal brought by one of them).
	keepUnits := map[string]bool{}
	for u, p := range principal {
		if matched[u] || matched[p] {
			keepUnits[u] = true
		}
		if matched[u] && p != "" {
			keepUnits[p] = true
		}
	}

	keepApps := map[string]bool{}
	for _, a := range resp.Applications {
		var units []*pb.UnitStatus
		for _, u := range a.Units {
			if keepUnits[u.Name] {
				units = append(units, u)
				if u.Machine != "" {
					keepMachines[u.Machine] = true
				}
			}
		}
		if named(a.Name) || inStatus(applicationStatus(a)) {
			appMatched[a.Name] = true
		}
		if appMatched[a.Name] || len(units) > 0 {
			keepApps[a.Name] = true
		}
		a.Units = units
	}

	var machines []*pb.MachineStatus
	for _, m := range resp.Machines {
		if keepMachines[m.Id] {
			machines = append(machines, m)
		}
	}
	resp.Machines = machines
	var apps []*pb.ApplicationStatus
	for _, a := range resp.Applications {
		if keepApps[a.Name] {
			apps = append(apps, a)
		}
	}
	resp.Applications = apps
	var rels []*pb.RelationStatus
	for _, r := range resp.Relations {
		for _, ep := range r.Endpoints {
			if appMatched[ep.Application] {
				rels = append(rels, r)
				break
			}
		}
	}
	resp.Relations = rels
	return nil
}

// applicationStatus is the status juju status shows for a: the charm's, else the most severe of
// its units' workload statuses.
func applicationStatus(a *pb.ApplicationStatus) *pb.StatusInfo {
	if a.GetStatus().GetStatus() != "" {
		return a.GetStatus()
	}
	var workloads []status.Status
	for _, u := range a.Units {
		workloads = append(workloads, status.Status(u.GetWorkloadStatus().GetStatus()))
	}
	return &pb.StatusInfo{Status: string(status.DeriveApplication(workloads))}
}
