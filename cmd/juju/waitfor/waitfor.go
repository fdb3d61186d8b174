// Package waitfor holds "juju wait-for": block until an application, unit or machine reaches a
// state, woken by the controller's watch rather than by polling.
package waitfor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
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
	IO           *output.Streams
	Client       func(ctx context.Context) (waitAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model   string
	Kind    string
	Name    string
	Query   string
	Timeout time.Duration

	query *query
}

const defaultTimeout = 10 * time.Minute

// NewCmdWaitFor returns "juju wait-for <application|unit|machine> <name>": wait until an
// entity satisfies a query.
func NewCmdWaitFor(f *cmdutil.Factory, runF func(*waitOptions) error) *cobra.Command {
	opts := &waitOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client: func(ctx context.Context) (waitAPI, error) {
			c, err := f.Client(ctx)
			if err != nil {
				return nil, err
			}
			return cmdutil.WatchClient{Client: c}, nil
		},
	}
	cmd := &cobra.Command{
		Use:     "wait-for [options] <application|unit|machine> <name>",
		Aliases: []string{"wait"},
		Short:   "Wait for an application, unit or machine to reach a state",
		Long: `Wait until an application, unit or machine satisfies a query, re-reading it each time
the controller reports a change to it (no polling). On success one line goes to stderr;
after --timeout the command fails with the state last seen.

A query compares fields with == or != to quoted values; && binds tighter than ||:

  life=="alive" && status=="active" || life=="dead"

Fields:
  application  life, status (as juju status shows it), scale (number of units)
  unit         life, workload-status, agent-status, machine
  machine      life, status (agent status), instance-status

life is alive, dying or dead. An entity that is gone, or not there yet, has life "dead"
and every other field empty: life=="dead" waits for a removal to finish, and any other
query waits for the entity to appear.

Default queries: application status=="active", unit workload-status=="active", machine
status=="started".`,
		Example: `  juju wait-for application mysql
  juju wait-for unit mysql/0 --query 'agent-status=="idle"' --timeout 5m
  juju wait-for application mysql --query 'life=="dead"'
  juju wait-for machine 1 --query 'status=="started" || life=="dead"'`,
		Annotations: map[string]string{cmdutil.SeeAlso: "status, deploy, remove-application, show-unit"},
		Args:        waitArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Kind, opts.Name = args[0], args[1]
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
	if len(args) == 0 {
		return cmdutil.FlagErrorf("no entity kind specified; use application, unit or machine")
	}
	kind := args[0]
	if _, ok := kindFields[kind]; !ok {
		return cmdutil.FlagErrorf("unknown entity kind %q; use application, unit or machine", kind)
	}
	if len(args) == 1 {
		return cmdutil.FlagErrorf("no %s specified", kind)
	}
	if len(args) > 2 {
		return cmdutil.UnrecognizedArgs(args[2:])
	}
	name := args[1]
	switch kind {
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
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
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
			return parent.Err()
		}
		return fmt.Errorf("%s %s %q: %w", doing, opts.Kind, opts.Name, err)
	}

	// Watch first: every change after Watch returns is reported, so none falls between a read
	// and the wait that follows it.
	w, err := c.Watch(ctx, &jujupb.WatchRequest{Model: model.UUID, Targets: watchTargets(opts.Kind, opts.Name)})
	if err != nil {
		return fail(err, "watching")
	}
	defer w.Close()
	changed, ended := cmdutil.FollowWatch(w)

	for {
		fs, err := c.FullStatus(ctx, model.UUID, []string{opts.Name})
		if err != nil {
			return fail(err, "reading")
		}
		e := readEntity(opts.Kind, opts.Name, fs)
		if opts.query.match(e.fields) {
			if e.present {
				fmt.Fprintf(opts.IO.ErrOut, "%s %q reached %s\n", opts.Kind, opts.Name, opts.query)
			} else {
				fmt.Fprintf(opts.IO.ErrOut, "%s %q is gone\n", opts.Kind, opts.Name)
			}
			return nil
		}
		last = e
		select {
		case <-changed:
		case err := <-ended:
			return fail(err, "watching")
		case <-ctx.Done():
			return fail(ctx.Err(), "waiting for")
		}
	}
}

// watchTargets are what can change the entity's fields: an application's status and scale
// follow its units, and a unit's life follows its application's.
func watchTargets(kind, name string) []*jujupb.WatchTarget {
	switch kind {
	case "application":
		return []*jujupb.WatchTarget{{Kind: "application", Id: name}, {Kind: "unit", Id: name + "/"}}
	case "unit":
		app, _, _ := strings.Cut(name, "/")
		return []*jujupb.WatchTarget{{Kind: "unit", Id: name}, {Kind: "application", Id: app}}
	}
	return []*jujupb.WatchTarget{{Kind: kind, Id: name}}
}

// entity is what a query sees of an application, unit or machine.
type entity struct {
	kind    string
	present bool
	fields  map[string]string
}

// readEntity finds the entity in fs. One that is not there has life "dead" and no other field.
func readEntity(kind, name string, fs *jujupb.FullStatusResponse) *entity {
	e := &entity{kind: kind, fields: map[string]string{"life": "dead"}}
	set := func(life string, fields ...string) {
		e.present = true
		e.fields["life"] = life
		if life == "" {
			e.fields["life"] = "alive"
		}
		for i := 0; i+1 < len(fields); i += 2 {
			e.fields[fields[i]] = fields[i+1]
		}
	}
	switch kind {
	case "application":
		for _, pa := range fs.GetApplications() {
			if pa.GetName() == name {
				set(pa.GetLife(), "status", status.AppStatus(pa), "scale", strconv.Itoa(len(pa.GetUnits())))
			}
		}
	case "unit":
		for _, pa := range fs.GetApplications() {
			for _, pu := range pa.GetUnits() {
				if pu.GetName() == name {
					set(pu.GetLife(),
						"workload-status", pu.GetWorkloadStatus().GetStatus(),
						"agent-status", pu.GetAgentStatus().GetStatus(),
						"machine", pu.GetMachine())
				}
			}
		}
	case "machine":
		for _, pm := range fs.GetMachines() {
			if pm.GetId() == name {
				set(pm.GetLife(),
					"status", pm.GetAgentStatus().GetStatus(),
					"instance-status", pm.GetInstanceStatus().GetStatus())
			}
		}
	}
	return e
}

// String lists the entity's fields as "life=alive workload-status=waiting", leaving out empty
// ones; an absent entity is "not found".
func (e *entity) String() string {
	if !e.present {
		return "not found"
	}
	var parts []string
	for _, f := range kindFields[e.kind] {
		if v := e.fields[f]; v != "" {
			parts = append(parts, f+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func timeoutError(opts *waitOptions, last *entity) error {
	msg := fmt.Sprintf("timed out waiting for %s %q to reach %s", opts.Kind, opts.Name, opts.query)
	if last != nil {
		msg += "; last seen: " + last.String()
	}
	return errors.New(msg)
}
