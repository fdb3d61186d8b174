package hooktool

import (
	"fmt"
	"maps"
	"slices"
)

var statuses = []string{"maintenance", "blocked", "waiting", "active"}

func statusSet(t *invocation) error {
	// ops passes --application=False or --application=True (pflag reads both as booleans).
	app := t.fs.Bool("application", false, "set the application's status (leader only)")
	if err := t.parse(2); err != nil {
		return err
	}
	status := t.arg(0)
	if status == "" {
		return usagef("no status specified")
	}
	if !slices.Contains(statuses, status) {
		return usagef("invalid status %q, expected one of %v", status, statuses)
	}
	return t.c.StatusSet(t.ctx, *app, status, t.arg(1))
}

// statusDetails is one status as status-get prints it: the status alone, or with --include-data
// its message and data too.
func statusDetails(s Status, includeData bool) map[string]any {
	details := map[string]any{"status": s.Status}
	if includeData {
		data := map[string]any{}
		maps.Copy(data, s.Data)
		details["message"] = s.Message
		details["status-data"] = data
	}
	return details
}

func statusGet(t *invocation) error {
	app := t.fs.Bool("application", false, "print the application's status and its units' (leader only)")
	data := t.fs.Bool("include-data", false, "print the message and data with the status")
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	smart := t.formatName() == "smart"
	if !*app {
		s, err := t.c.StatusGet(t.ctx)
		if err != nil {
			return fmt.Errorf("finding workload status: %w", err)
		}
		if !*data && smart {
			return t.write(s.Status)
		}
		return t.write(statusDetails(s, *data))
	}
	s, units, err := t.c.ApplicationStatus(t.ctx)
	if err != nil {
		return fmt.Errorf("finding application status: %w", err)
	}
	if !*data && smart {
		return t.write(s.Status)
	}
	details := statusDetails(s, *data)
	unitDetails := map[string]any{}
	for name, us := range units {
		unitDetails[name] = statusDetails(us, *data)
	}
	details["units"] = unitDetails
	return t.write(map[string]any{"application-status": details})
}
