// Package relation holds the commands that add and remove relations between applications.
package relation

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// integrateAPI is the part of the client "juju integrate" uses.
type integrateAPI interface {
	Integrate(ctx context.Context, model string, endpoints []string) (*jujupb.IntegrateResponse, error)
}

var _ integrateAPI = (*client.Client)(nil)

type integrateOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (integrateAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model     string
	Endpoints []string
}

// NewCmdIntegrate returns "juju integrate <app>[:<endpoint>] <app>[:<endpoint>]" (alias
// relate): relate two applications.
func NewCmdIntegrate(f *cmdutil.Factory, runF func(*integrateOptions) error) *cobra.Command {
	opts := &integrateOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[integrateAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "integrate [options] <application>[:<endpoint>] <application>[:<endpoint>]",
		Aliases: []string{"relate"},
		Short:   "Integrate two applications",
		Long: `Relate two applications of the model, so that their units exchange settings over a
common interface. One side must provide what the other requires (peers relate only to
themselves); an endpoint name is needed only when more than one pair of endpoints would
match. A container-scoped endpoint relates a subordinate to a principal: every unit of the
principal then gets a unit of the subordinate.`,
		Example: `  juju integrate wordpress mysql
  juju integrate wordpress:db mysql:db
  juju integrate mysql logging`,
		Annotations: map[string]string{cmdutil.SeeAlso: "remove-relation, status, deploy"},
		Args:        cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return cmdutil.FlagErrorf("an integration must involve two applications")
			}
			if err := validateEndpoints(args); err != nil {
				return err
			}
			opts.Endpoints = args
			if runF != nil {
				return runF(opts)
			}
			return integrateRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// validateEndpoints checks "<application>[:<endpoint>]" arguments; errors are usage errors.
func validateEndpoints(args []string) error {
	for _, arg := range args {
		app, endpoint, hasEndpoint := strings.Cut(arg, ":")
		if hasEndpoint && (app == "" || !names.IsValidEndpoint(endpoint)) {
			// A ":" at either end, or a second one.
			return cmdutil.FlagErrorf("endpoint %q not valid", arg)
		}
		if !names.IsValidApplication(app) {
			return cmdutil.FlagErrorf("application name %q not valid", app)
		}
	}
	return nil
}

// relationsHint follows Juju's "already exists" error.
const relationsHint = "Use 'juju status --relations' to view the current relations."

func integrateRun(ctx context.Context, opts *integrateOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	_, err = c.Integrate(ctx, model.UUID, opts.Endpoints)
	if errors.Is(err, apierr.AlreadyExists) {
		// cannot add relation "a:x b:y": relation a:x b:y already exists
		msg := strings.Replace(err.Error(), ": ", "\n", 1)
		return apierr.Errorf(apierr.AlreadyExists, "%s\n\n%s", msg, relationsHint)
	}
	// The controller's errors (ambiguous relation, no relations found, application "x" not
	// found) already say what is wrong.
	return err
}
