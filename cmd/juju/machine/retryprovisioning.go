package machine

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// RetryProvisioningAPI is the part of the client that retries failed provisioning: "juju
// retry-provisioning", and "juju resolved" for machines.
type RetryProvisioningAPI interface {
	RetryProvisioning(ctx context.Context, req *jujupb.RetryProvisioningRequest) ([]*jujupb.RemoveResult, error)
}

var _ RetryProvisioningAPI = (*client.Client)(nil)

type retryProvisioningOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (RetryProvisioningAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model    string
	Machines []string
	All      bool
}

// NewCmdRetryProvisioning returns "juju retry-provisioning <machine>...": provision machines
// whose provisioning failed again (L-M5).
func NewCmdRetryProvisioning(f *cmdutil.Factory, runF func(*retryProvisioningOptions) error) *cobra.Command {
	opts := &retryProvisioningOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[RetryProvisioningAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "retry-provisioning [options] <machine> [...]",
		Short: "Retry provisioning machines that failed to start",
		Long: `A machine whose instance could not be started shows an error status with the reason
in "juju status". Once the cause is fixed, retry-provisioning makes the provisioner try
again. --all retries every machine in that state.

To change a machine's constraints as well, use "juju resolved <machine> --constraints".`,
		Example:     "  juju retry-provisioning 0\n  juju retry-provisioning 0 1\n  juju retry-provisioning --all",
		Annotations: map[string]string{cmdutil.SeeAlso: "resolved, add-machine, show-machine, status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return cmdutil.FlagErrorf("specify machines or --all but not both")
			case !opts.All && len(args) == 0:
				return cmdutil.FlagErrorf("no machine specified")
			}
			for _, id := range args {
				if !names.IsValidMachine(id) {
					return cmdutil.FlagErrorf("invalid machine %q", id)
				}
			}
			opts.Machines = args
			if runF != nil {
				return runF(opts)
			}
			return retryProvisioningRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "Retry every machine whose provisioning failed")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func retryProvisioningRun(ctx context.Context, opts *retryProvisioningOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	failed, err := RetryMachines(ctx, c, opts.IO.ErrOut, &jujupb.RetryProvisioningRequest{
		Model: model.UUID, Machines: opts.Machines, All: opts.All,
	})
	if err != nil {
		return err
	}
	if failed {
		return cmdutil.ErrSilent
	}
	return nil
}

// RetryMachines asks the controller to provision req's machines again and reports each
// machine it could not retry as an ERROR line on errOut; failed says whether there was any.
// Success prints nothing, as in Juju.
func RetryMachines(ctx context.Context, api RetryProvisioningAPI, errOut io.Writer, req *jujupb.RetryProvisioningRequest) (failed bool, err error) {
	results, err := api.RetryProvisioning(ctx, req)
	if err != nil {
		return false, fmt.Errorf("retrying provisioning: %w", err)
	}
	for _, r := range results {
		if r.GetError() != "" {
			ReportFailure(errOut, r.GetName(), r.GetError())
			failed = true
		}
	}
	return failed, nil
}

// ReportFailure prints one entity's failure as "ERROR <msg>", naming the entity first when the
// controller's message does not.
func ReportFailure(w io.Writer, name, msg string) {
	if name != "" && !mentions(msg, name) {
		msg = name + ": " + msg
	}
	fmt.Fprintf(w, "ERROR %s\n", msg)
}

// mentions reports whether msg names name as a whole word: "machine 1 is ..." mentions 1,
// "machine 14 ..." does not.
func mentions(msg, name string) bool {
	word := func(r byte) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '-'
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !word(msg[start-1])) && (end == len(msg) || !word(msg[end])) {
			return true
		}
		i = start + 1
	}
}
