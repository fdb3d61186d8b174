// Package waitfor holds "juju wait-for": block until a model, application, unit or machine
// reaches a state, woken by the controller's watch rather than by polling.
package waitfor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// waitAPI is what "juju wait-for" needs of the client: a watch that wakes it, and the status it
// reads after each wake-up.
type waitAPI interface {
	Watch(ctx context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error)
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ waitAPI = cmdutil.WatchClient{}

type waitOptions struct {
	IO *output.Streams
	// Client connects to a controller ("" is the current one).
	Client       func(ctx context.Context, controller string) (waitAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// LookupModel resolves the model "wait-for model" names: [<controller>:]<model>.
	LookupModel func(ctx context.Context, name string) (*cmdutil.ModelRef, error)

	Model   string
	Kind    string
	Name    string
	Query   string
	Timeout time.Duration

	query *query
}

const defaultTimeout = 10 * time.Minute

// NewCmdWaitFor returns "juju wait-for <model|application|unit|machine> <name>": wait until an
// entity satisfies a query.
func NewCmdWaitFor(f *cmdutil.Factory, runF func(*waitOptions) error) *cobra.Command {
	opts := &waitOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client: func(ctx context.Context, controller string) (waitAPI, error) {
			var c *client.Client
			var err error
			if controller == "" {
				c, err = f.Client(ctx)
			} else {
				c, err = f.Connect(ctx, controller)
			}
			if err != nil {
				return nil, err
			}
			return cmdutil.WatchClient{Client: c}, nil
		},
		LookupModel: func(ctx context.Context, name string) (*cmdutil.ModelRef, error) {
			cfg, err := f.Config()
			if err != nil {
				return nil, err
			}
			controller, model := cmdutil.SplitModel(name)
			if controller == "" {
				controller = cfg.Controller
			}
			return f.LookupModel(ctx, controller, model)
		},
	}
	cmd := &cobra.Command{
		Use:     "wait-for [options] <model|application|unit|machine> <name>",
		Aliases: []string{"wait"},
		Short:   "Wait for a model, application, unit or machine to reach a state",
		Long: `Wait until a model, application, unit or machine satisfies a query, re-reading it each
time the controller reports a change to it (no polling). On success one line goes to stderr;
after --timeout the command fails with the state last seen.

A query is Juju's wait-for query language: fields compared with == != < <= > >= to values
(quoted strings, numbers, true, false), combined with && and || (&& binds tighter) and
parentheses; len(x) counts a collection, and forEach(<collection>, <name> => <condition>)
holds when the condition holds for every element (and there is at least one):

  life=="alive" && status=="active" || life=="dead"
  forEach(units, unit => unit.workload-status=="active" && unit.agent-status=="idle")
  len(units) >= 3

Fields:
  model        name, life, status (available or destroying), and the collections
               applications, machines, units
  application  name, life, status (as juju status shows it), scale (number of units),
               charm-url, exposed, subordinate, workload-version; collections units,
               machines
  unit         name, application, life, workload-status, workload-message, agent-status,
               machine (also machine-id), public-address, principal, subordinate, leader;
               collection machines
  machine      id, life, status (also agent-status), instance-status, base

life is alive, dying or dead. An entity that is gone, or not there yet, has life "dead"
and every other field empty: life=="dead" waits for a removal to finish, and any other
query waits for the entity to appear (a model must exist when the wait starts). Queries
are checked before anything is sent: an unknown field or a value of the wrong type is a
usage error.

Default queries: model life=="alive" && status=="available", application
status=="active", unit workload-status=="active", machine status=="started".`,
		Example: `  juju wait-for application mysql
  juju wait-for unit mysql/0 --query 'agent-status=="idle"' --timeout 5m
  juju wait-for application mysql --query 'life=="dead"'
  juju wait-for application mysql --query 'forEach(units, unit => unit.workload-status=="active")'
  juju wait-for model default --query 'forEach(units, unit => unit.agent-status=="idle")'
  juju wait-for machine 1 --query 'status=="started" || life=="dead"'`,
		Annotations: map[string]string{cmdutil.SeeAlso: "status, deploy, remove-application, show-unit"},
		Args:        waitArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Kind, opts.Name = args[0], args[1]
			if opts.Kind == "model" && opts.Model != "" {
				return cmdutil.FlagErrorf("-m cannot be used with wait-for model: the model is its argument")
			}
			if opts.Query == "" {
				opts.Query = defaultQueries[opts.Kind]
			}
			q, err := parseQuery(opts.Kind, opts.Query)
			if err != nil {
				return cmdutil.FlagErrorf("invalid --query: %v", err)
			}
			opts.query = q
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			if runF != nil {
				return runF(opts)
			}
			return waitRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Query, "query", "", "Condition to wait for (see above); the default depends on the entity kind")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultTimeout, "How long to wait before failing")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// waitArgs wants a known entity kind and a valid name of that kind.
func waitArgs(_ *cobra.Command, args []string) error {
	use := "use " + orList(kinds)
	if len(args) == 0 {
		return cmdutil.FlagErrorf("no entity kind specified; %s", use)
	}
	kind := args[0]
	if _, ok := kindFields[kind]; !ok {
		return cmdutil.FlagErrorf("unknown entity kind %q; %s", kind, use)
	}
	if len(args) == 1 {
		return cmdutil.FlagErrorf("no %s specified", kind)
	}
	if len(args) > 2 {
		return cmdutil.UnrecognizedArgs(args[2:])
	}
	name := args[1]
	switch kind {
	case "model":
		if _, m := cmdutil.SplitModel(name); !names.IsValidModel(m) {
			return cmdutil.FlagErrorf("invalid model name %q", name)
		}
	case "application":
		return cmdutil.FlagErrorWrap(names.ValidateApplicationName(name))
	case "unit":
		if !names.IsValidUnit(name) {
			return cmdutil.FlagErrorf("invalid unit name %q", name)
		}
	case "machine":
		if !names.IsValidMachine(name) {
			return cmdutil.FlagErrorf("invalid machine id %q", name)
		}
	}
	return nil
}

func waitRun(ctx context.Context, opts *waitOptions) error {
	var model *cmdutil.ModelRef
	var err error
	if opts.Kind == "model" {
		model, err = opts.LookupModel(ctx, opts.Name)
	} else {
		model, err = opts.ResolveModel(ctx)
	}
	if err != nil {
		return err
	}
	controller := ""
	if opts.Kind == "model" {
		controller = model.Controller
	}
	c, err := opts.Client(ctx, controller)
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var last *entity
	// fail explains err: our own deadline passing is the timeout, anything else is passed on.
	// A call can fail with the deadline a moment before ctx reports it, so err counts too.
	fail := func(err error, doing string) error {
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
		if timedOut && parent.Err() == nil {
			return timeoutError(opts, last)
		}
		if parent.Err() != nil {
			return interruptedError(opts, last)
		}
		return fmt.Errorf("%s %s %q: %w", doing, opts.Kind, opts.Name, err)
	}

	// Watch first: every change after Watch returns is reported, so none falls between a read
	// and the wait that follows it.
	w, err := c.Watch(ctx, &jujupb.WatchRequest{Model: model.UUID, Targets: watchTargets(opts.Kind, opts.Name, opts.query)})
	if err != nil {
		return fail(err, "watching")
	}
	defer w.Close()
	changed, ended := cmdutil.FollowWatch(w)

	var patterns []string
	if opts.Kind != "model" {
		patterns = []string{opts.Name}
	}
	for {
		fs, err := c.FullStatus(ctx, model.UUID, patterns)
		switch {
		case opts.Kind == "model" && errors.Is(err, apierr.NotFound):
			// The model is gone: it has life "dead", like any entity that is not there.
			fs = nil
		case err != nil:
			return fail(err, "reading")
		}
		e := readEntity(opts.Kind, opts.Name, fs)
		if opts.query.match(e) {
			// The outcome is the exit code; the line only says it, so --quiet drops it.
			if e.present {
				opts.IO.Infof("%s %q reached %s", opts.Kind, opts.Name, opts.query)
			} else {
				opts.IO.Infof("%s %q is gone", opts.Kind, opts.Name)
			}
			return nil
		}
		last = e
		select {
		case <-changed:
		case err := <-ended:
			if opts.Kind == "model" && errors.Is(err, apierr.NotFound) {
				// The watch of a removed model ends: read it once more, as gone.
				changed, ended = nil, nil
				continue
			}
			return fail(err, "watching")
		case <-ctx.Done():
			return fail(ctx.Err(), "waiting for")
		}
	}
}

// watchTargets are what can change what the query reads: an application's status and scale
// follow its units, a unit's life follows its application's, and machine collections follow
// the machines.
func watchTargets(kind, name string, q *query) []*jujupb.WatchTarget {
	var targets []*jujupb.WatchTarget
	switch kind {
	case "model":
		return []*jujupb.WatchTarget{{Kind: "model"}}
	case "application":
		targets = []*jujupb.WatchTarget{{Kind: "application", Id: name}, {Kind: "unit", Id: name + "/"}}
	case "unit":
		app, _, _ := strings.Cut(name, "/")
		targets = []*jujupb.WatchTarget{{Kind: "unit", Id: name}, {Kind: "application", Id: app}}
	default:
		return []*jujupb.WatchTarget{{Kind: kind, Id: name}}
	}
	if q != nil && (slices.Contains(q.fields, "machines") || q.collections["machines"] != nil) {
		targets = append(targets, &jujupb.WatchTarget{Kind: "machine"})
	}
	return targets
}

// entity is what a query sees of a model, application, unit or machine: its fields by name,
// collections as []*entity.
type entity struct {
	kind    string
	name    string
	present bool
	values  map[string]any
}

// get returns a field's value; one the entity lacks is its type's zero value.
func (e *entity) get(name string) any {
	if v, ok := e.values[name]; ok {
		return v
	}
	f, _ := fieldOf(e.kind, name)
	switch f.typ {
	case tString:
		return ""
	case tInt:
		return int64(0)
	case tFloat:
		return 0.0
	case tBool:
		return false
	}
	return []*entity(nil)
}

func lifeOf(life string) string { return cmp.Or(life, "alive") }

// readEntity finds the entity in fs (nil: a model that is gone). One that is not there has life
// "dead" and no other field.
func readEntity(kind, name string, fs *jujupb.FullStatusResponse) *entity {
	absent := &entity{kind: kind, name: name, values: map[string]any{"life": "dead"}}
	machines := map[string]*entity{}
	for _, pm := range fs.GetMachines() {
		machines[pm.GetId()] = machineEntity(pm)
	}
	switch kind {
	case "model":
		ms := fs.GetModel()
		if ms == nil || ms.GetName() == "" {
			return absent
		}
		e := &entity{kind: kind, name: name, present: true, values: map[string]any{
			"name": ms.GetName(), "life": lifeOf(ms.GetLife()), "status": ms.GetStatus().GetStatus(),
		}}
		var apps, units, all []*entity
		for _, pa := range fs.GetApplications() {
			a := applicationEntity(pa, machines)
			apps = append(apps, a)
			units = append(units, a.values["units"].([]*entity)...)
		}
		for _, pm := range fs.GetMachines() {
			all = append(all, machines[pm.GetId()])
		}
		e.values["applications"], e.values["units"], e.values["machines"] = apps, units, all
		return e
	case "application":
		for _, pa := range fs.GetApplications() {
			if pa.GetName() == name {
				return applicationEntity(pa, machines)
			}
		}
	case "unit":
		for _, pa := range fs.GetApplications() {
			for _, pu := range pa.GetUnits() {
				if pu.GetName() == name {
					return unitEntity(pa, pu, machines)
				}
			}
		}
	case "machine":
		if m, ok := machines[name]; ok {
			return m
		}
	}
	return absent
}

func applicationEntity(pa *jujupb.ApplicationStatus, machines map[string]*entity) *entity {
	var units, hosts []*entity
	seen := map[string]bool{}
	for _, pu := range pa.GetUnits() {
		units = append(units, unitEntity(pa, pu, machines))
		if m, ok := machines[pu.GetMachine()]; ok && !seen[pu.GetMachine()] {
			seen[pu.GetMachine()] = true
			hosts = append(hosts, m)
		}
	}
	return &entity{kind: "application", name: pa.GetName(), present: true, values: map[string]any{
		"name": pa.GetName(), "life": lifeOf(pa.GetLife()), "status": status.AppStatus(pa),
		"scale": int64(len(pa.GetUnits())), "charm-url": pa.GetCharmUrl(), "exposed": pa.GetExposed(),
		"subordinate": pa.GetSubordinate(), "workload-version": pa.GetWorkloadVersion(),
		"units": units, "machines": hosts,
	}}
}

func unitEntity(pa *jujupb.ApplicationStatus, pu *jujupb.UnitStatus, machines map[string]*entity) *entity {
	var hosts []*entity
	if m, ok := machines[pu.GetMachine()]; ok {
		hosts = []*entity{m}
	}
	return &entity{kind: "unit", name: pu.GetName(), present: true, values: map[string]any{
		"name": pu.GetName(), "application": pa.GetName(), "life": lifeOf(pu.GetLife()),
		"workload-status": pu.GetWorkloadStatus().GetStatus(), "workload-message": pu.GetWorkloadStatus().GetMessage(),
		"agent-status": pu.GetAgentStatus().GetStatus(), "machine": pu.GetMachine(), "machine-id": pu.GetMachine(),
		"public-address": pu.GetPublicAddress(), "principal": pu.GetPrincipal(), "subordinate": pu.GetPrincipal() != "",
		"leader": pu.GetLeader(), "machines": hosts,
	}}
}

func machineEntity(pm *jujupb.MachineStatus) *entity {
	b := ""
	if pm.GetBase().GetName() != "" {
		// As status shows it: the risk only when not stable ("ubuntu@22.04", "ubuntu@22.04/edge").
		b = pm.GetBase().GetName() + "@" + strings.TrimSuffix(pm.GetBase().GetChannel(), "/stable")
	}
	return &entity{kind: "machine", name: pm.GetId(), present: true, values: map[string]any{
		"id": pm.GetId(), "life": lifeOf(pm.GetLife()), "status": pm.GetAgentStatus().GetStatus(),
		"agent-status": pm.GetAgentStatus().GetStatus(), "instance-status": pm.GetInstanceStatus().GetStatus(),
		"base": b,
	}}
}

// describe lists what the query reads of the entity, life first: "life=alive
// workload-status=waiting", and per collection its elements' fields ("units: mysql/0
// (workload-status=waiting)"); an absent entity is "not found".
func (e *entity) describe(q *query) string {
	if !e.present {
		return "not found"
	}
	fields := []string{"life"}
	for _, f := range q.fields {
		if f != "life" {
			fields = append(fields, f)
		}
	}
	var parts []string
	for _, f := range kindFields[e.kind] {
		if !slices.Contains(fields, f.name) {
			continue
		}
		switch v := e.get(f.name).(type) {
		case []*entity:
			if _, walked := q.collections[f.name]; !walked {
				parts = append(parts, fmt.Sprintf("%s=%d", f.name, len(v)))
			}
		case string:
			if v != "" {
				parts = append(parts, f.name+"="+v)
			}
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", f.name, v))
		}
	}
	line := strings.Join(parts, " ")
	for _, f := range kindFields[e.kind] {
		elemFields, ok := q.collections[f.name]
		if !ok {
			continue
		}
		items := e.get(f.name).([]*entity)
		var descs []string
		for _, item := range items {
			var kv []string
			for _, name := range elemFields {
				kv = append(kv, name+"="+valueString(item.get(name)))
			}
			descs = append(descs, item.name+" ("+strings.Join(kv, " ")+")")
		}
		if len(descs) == 0 {
			descs = []string{"none"}
		}
		line += "; " + f.name + ": " + strings.Join(descs, ", ")
	}
	return line
}

// valueString is a field's value in "last seen": a collection by the names of its elements.
func valueString(v any) string {
	items, ok := v.([]*entity)
	if !ok {
		return fmt.Sprint(v)
	}
	if len(items) == 0 {
		return "none"
	}
	names := make([]string, len(items))
	for i, item := range items {
		names[i] = item.name
	}
	return strings.Join(names, ",")
}

// interruptedError is the answer to Ctrl-C while waiting: exit 1, as for any command
// interrupted (docs/scripting.md), saying what was last seen rather than "context canceled".
func interruptedError(opts *waitOptions, last *entity) error {
	msg := fmt.Sprintf("interrupted waiting for %s %q to reach %s", opts.Kind, opts.Name, opts.query)
	if last != nil {
		msg += "; last seen: " + last.describe(opts.query)
	}
	return interrupted(msg)
}

// interrupted reads as its message and is cmdutil.ErrInterrupted to errors.Is.
type interrupted string

func (e interrupted) Error() string { return string(e) }

func (e interrupted) Is(target error) bool { return target == cmdutil.ErrInterrupted }

func timeoutError(opts *waitOptions, last *entity) error {
	msg := fmt.Sprintf("timed out waiting for %s %q to reach %s", opts.Kind, opts.Name, opts.query)
	if last != nil {
		msg += "; last seen: " + last.describe(opts.query)
	}
	return errors.New(msg)
}
