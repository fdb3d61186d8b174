package state

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/core/names"
)

// PortRange is an open-port value: a protocol with a range of ports (icmp has none).
type PortRange struct {
	From, To int
	Protocol string
}

// String is the canonical form: "80/tcp", "8000-8005/udp", "icmp".
func (p PortRange) String() string {
	switch {
	case p.Protocol == "icmp":
		return "icmp"
	case p.From == p.To:
		return fmt.Sprintf("%d/%s", p.From, p.Protocol)
	}
	return fmt.Sprintf("%d-%d/%s", p.From, p.To, p.Protocol)
}

func (p PortRange) overlaps(q PortRange) bool {
	return p.Protocol == q.Protocol && p.From <= q.To && q.From <= p.To
}

// comparePorts sorts by protocol, then numerically by port.
func comparePorts(a, b PortRange) int {
	return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
}

// ParsePortRange reads "80", "80/tcp", "8000-8005/udp" or "icmp" (no protocol means tcp, as
// open-port has it).
func ParsePortRange(s string) (PortRange, error) {
	bad := func(why string) (PortRange, error) {
		return PortRange{}, apierr.Errorf(apierr.NotValid, "invalid port range %q: %s", s, why)
	}
	spec, proto, hasProto := strings.Cut(strings.TrimSpace(s), "/")
	proto = strings.ToLower(proto)
	if strings.ToLower(spec) == "icmp" && !hasProto {
		return PortRange{Protocol: "icmp"}, nil
	}
	if !hasProto {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" {
		return bad(`protocol must be "tcp", "udp" or "icmp"`)
	}
	fromS, toS, isRange := strings.Cut(spec, "-")
	if !isRange {
		toS = fromS
	}
	from, err1 := strconv.Atoi(fromS)
	to, err2 := strconv.Atoi(toS)
	if err1 != nil || err2 != nil {
		return bad("expected <port>[/<protocol>] or <from>-<to>[/<protocol>]")
	}
	if from < 1 || from > 65535 || to < 1 || to > 65535 {
		return bad("ports must be between 1 and 65535")
	}
	if from > to {
		return bad("the first port is greater than the last")
	}
	return PortRange{From: from, To: to, Protocol: proto}, nil
}

func parsePortList(list []string) ([]PortRange, error) {
	out := make([]PortRange, 0, len(list))
	for _, s := range list {
		p, err := ParsePortRange(s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// SetUnitPorts opens and closes port ranges of a unit (open-port, close-port) and returns the
// ranges open afterwards, sorted by protocol then port. Opening what is open, or closing what
// is closed, does nothing; a range that overlaps an open one without being it is refused, as
// in Juju. Nothing is written when nothing changes.
func (s *State) SetUnitPorts(ctx context.Context, uuid, unit string, open, close []string) ([]string, error) {
	toOpen, err := parsePortList(open)
	if err != nil {
		return nil, err
	}
	toClose, err := parsePortList(close)
	if err != nil {
		return nil, err
	}
	for _, p := range toOpen {
		if slices.Contains(toClose, p) {
			return nil, apierr.Errorf(apierr.NotValid, "port range %s both opened and closed", p)
		}
	}
	var result []string
	err = s.run(ctx, fmt.Sprintf("setting ports of unit %q", unit), func(ctx context.Context, r *reader) (*writes, error) {
		u, err := r.unit(ctx, uuid, unit)
		if err != nil {
			return nil, err
		}
		current, err := parsePortList(u.OpenPorts)
		if err != nil {
			return nil, fmt.Errorf("stored ports of unit %q: %w", unit, err)
		}
		next := slices.Clone(current)
		for _, p := range toClose {
			if i := slices.Index(next, p); i >= 0 {
				next = slices.Delete(next, i, i+1)
				continue
			}
			for _, q := range next {
				if p.overlaps(q) {
					return nil, apierr.Errorf(apierr.NotValid, "cannot close %s on unit %q: it overlaps open port range %s", p, unit, q)
				}
			}
		}
		for _, p := range toOpen {
			if slices.Contains(next, p) {
				continue
			}
			for _, q := range next {
				if p.overlaps(q) {
					return nil, apierr.Errorf(apierr.NotValid, "cannot open %s on unit %q: it conflicts with open port range %s", p, unit, q)
				}
			}
			next = append(next, p)
		}
		slices.SortFunc(next, comparePorts)
		result = make([]string, 0, len(next))
		for _, p := range next {
			result = append(result, p.String())
		}
		if slices.Equal(result, u.OpenPorts) {
			return nil, nil
		}
		if len(result) == 0 {
			u.OpenPorts = nil
		} else {
			u.OpenPorts = result
		}
		w := &writes{}
		w.put(unitKey(uuid, unit), u)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// SetApplicationVersion records the workload version of a unit's application
// (application-version-set); nothing is written when it is unchanged.
func (s *State) SetApplicationVersion(ctx context.Context, uuid, unit, version string) error {
	appName, err := names.UnitApplication(unit)
	if err != nil {
		return apierr.Errorf(apierr.NotValid, "%v", err)
	}
	return s.run(ctx, fmt.Sprintf("setting workload version of %q", appName), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.unit(ctx, uuid, unit); err != nil {
			return nil, err
		}
		app, err := r.application(ctx, uuid, appName)
		if err != nil {
			return nil, err
		}
		if app.WorkloadVersion == version {
			return nil, nil
		}
		app.WorkloadVersion = version
		w := &writes{}
		w.put(applicationKey(uuid, appName), app)
		return w, nil
	})
}
