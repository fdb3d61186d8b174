package action

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// actionsAPI is the part of the client "juju actions" and "juju show-action" use.
type actionsAPI interface {
	ApplicationActions(ctx context.Context, model, app string) ([]*jujupb.ActionSpec, error)
}

var _ actionsAPI = (*client.Client)(nil)

type actionsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (actionsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	// Schema prints each action's params schema instead of its description.
	Schema bool
	Format output.Format
	Output string
}

// defaultFormat is the --format of actions when not given: a table, or YAML with --schema
// (which has no table), as in Juju.
const defaultFormat output.Format = "default"

// NewCmdActions returns "juju actions <application>": the actions its charm defines.
func NewCmdActions(f *cmdutil.Factory, runF func(*actionsOptions) error) *cobra.Command {
	opts := &actionsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[actionsAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "actions [options] <application>",
		Aliases: []string{"list-actions"},
		Short:   "List actions defined for an application",
		Long: `List the actions an application's charm defines, with their descriptions: a table by
default, a map of action name to description with --format yaml or json. --schema prints
each action's params as the JSON schema "juju run" checks them against (YAML unless
--format json says otherwise).`,
		Example: `  juju actions postgresql
  juju actions postgresql --format yaml
  juju actions postgresql --schema`,
		Annotations: map[string]string{cmdutil.SeeAlso: "run, show-action"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Format == output.Tabular && opts.Schema {
				return cmdutil.FlagErrorf("full schema not compatible with tabular output")
			}
			switch {
			case len(args) == 0:
				return cmdutil.FlagErrorf("no application name specified")
			case len(args) > 1:
				return cmdutil.UnrecognizedArgs(args[1:])
			case !names.IsValidApplication(args[0]):
				return cmdutil.FlagErrorf("invalid application name %q", args[0])
			}
			opts.Application = args[0]
			if runF != nil {
				return runF(opts)
			}
			return actionsRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, defaultFormat, output.JSON, output.Tabular, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Schema, "schema", false, "Display the full action schema")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func actionsRun(ctx context.Context, opts *actionsOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	specs, err := c.ApplicationActions(ctx, model.UUID, opts.Application)
	if err != nil {
		return err
	}
	if opts.Schema {
		schemas := map[string]any{}
		for _, s := range specs {
			schema, err := decodeObject(s.GetSchemaJson())
			if err != nil {
				return fmt.Errorf("action %q: params schema: %w", s.GetName(), err)
			}
			if schema == nil {
				schema = map[string]any{}
			}
			schemas[s.GetName()] = schema
		}
		format := opts.Format
		if format == defaultFormat {
			format = output.YAML
		}
		return output.WriteFile(opts.Output, format, schemas, opts.IO)
	}
	descriptions := map[string]string{}
	for _, s := range specs {
		descriptions[s.GetName()] = s.GetDescription()
		if descriptions[s.GetName()] == "" {
			descriptions[s.GetName()] = "No description"
		}
	}
	if opts.Format == output.JSON || opts.Format == output.YAML {
		return output.WriteFile(opts.Output, opts.Format, descriptions, opts.IO)
	}
	if len(descriptions) == 0 {
		opts.IO.Infof("No actions defined for %s.", opts.Application)
		return nil
	}
	return output.WriteFile(opts.Output, opts.Format, actionTable(descriptions), opts.IO)
}

// actionTable is the table of actions and descriptions; a description's further lines go
// under its first, in the description column.
type actionTable map[string]string

func (a actionTable) Table() []output.Table {
	t := output.Table{Header: []string{"Action", "Description"}}
	for _, name := range sortedKeys(a) {
		for i, line := range strings.Split(strings.TrimSpace(a[name]), "\n") {
			first := ""
			if i == 0 {
				first = name
			}
			t.Rows = append(t.Rows, []string{first, strings.TrimRight(line, "\r")})
		}
	}
	return []output.Table{t}
}

// WriteText renders the default format: the table.
func (a actionTable) WriteText(w io.Writer, f output.Format) error {
	if f != defaultFormat {
		return fmt.Errorf("format %q not supported", f)
	}
	return output.WriteTables(w, a.Table()...)
}

// findAction returns the named action's spec, nil when the charm has none of that name.
func findAction(specs []*jujupb.ActionSpec, name string) *jujupb.ActionSpec {
	i := slices.IndexFunc(specs, func(s *jujupb.ActionSpec) bool { return s.GetName() == name })
	if i < 0 {
		return nil
	}
	return specs[i]
}
