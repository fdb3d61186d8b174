// Package root assembles the juju command tree and is the one place that turns errors into
// exit codes.
package root

import (
	"io"

	"github.com/jujuclone/juju/completion"

	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/action"
	"github.com/jujuclone/juju/cmd/juju/application"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/controller"
	"github.com/jujuclone/juju/cmd/juju/machine"
	"github.com/jujuclone/juju/cmd/juju/model"
	"github.com/jujuclone/juju/cmd/juju/relation"
	resourcecmd "github.com/jujuclone/juju/cmd/juju/resource"
	sshcmd "github.com/jujuclone/juju/cmd/juju/ssh"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/cmd/juju/unit"
	versioncmd "github.com/jujuclone/juju/cmd/juju/version"
	"github.com/jujuclone/juju/cmd/juju/waitfor"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// NewCmdRoot returns the juju command with every subcommand registered.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "juju",
		Short: "Juju deploys and operates applications on a local controller",
		Long: `Juju deploys charms (applications and their operational code) into models on a
controller, adds units and machines, and reports their status.

Start with "juju bootstrap", then "juju deploy ./path/to/charm" and "juju status".
"juju help commands" lists every command; "juju help <command>" describes one.

Scripting contract: data goes to stdout, everything else (progress, warnings, prompts,
errors) to stderr. Exit codes: 0 success, 1 failure, 2 usage error (unknown command or
option, bad value, conflicting options; nothing is sent to the controller). Commands
never prompt when stdin is not a terminal: those that would ask fail, saying to pass
--no-prompt. --quiet drops the informational lines on stderr; --verbose adds detail.`,
		Example: `  juju bootstrap
  juju deploy ./charms/mysql
  juju status --format json
  juju help deploy`,
		Annotations:   map[string]string{cmdutil.SeeAlso: "help, bootstrap, deploy, status"},
		Version:       version.Binary(),
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if f.IO.Quiet && f.IO.Verbose {
				return cmdutil.FlagErrorf(`"verbose" and "quiet" flags clash, please use one or the other, not both`)
			}
			f.BindFlags(cmd.Flags())
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: jujuFlagError(err)}
	})
	cmd.CompletionOptions.HiddenDefaultCmd = true
	cmd.SuggestionsMinimumDistance = 2
	pf := cmd.PersistentFlags()
	pf.BoolVarP(&f.IO.Quiet, "quiet", "q", false, "Show no informational output")
	pf.BoolVarP(&f.IO.Verbose, "verbose", "v", false, "Show more verbose output")
	pf.BoolP("help", "h", false, "Show help on a command or other topic")
	cmd.Flags().Bool("version", false, "Print the version of juju")
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	cmd.SetHelpCommand(newCmdHelp())

	cmd.AddCommand(
		controller.NewCmdBootstrap(f, nil),
		controller.NewCmdControllers(f, nil),
		controller.NewCmdKillController(f, nil),
		controller.NewCmdDestroyController(f, nil),
		controller.NewCmdWhoami(f, nil),
		controller.NewCmdShowController(f, nil),
		controller.NewCmdEnableHA(f, nil),
		controller.NewCmdRemoveControllerMember(f, nil),
		model.NewCmdModels(f, nil),
		model.NewCmdAddModel(f, nil),
		model.NewCmdDestroy(f, nil),
		model.NewCmdShowModel(f, nil),
		model.NewCmdModelConfig(f, nil),
		model.NewCmdModelDefaults(f, nil),
		model.NewCmdSwitch(f, nil),
		model.NewCmdModelConstraints(f, nil),
		model.NewCmdSetModelConstraints(f, nil),
		model.NewCmdExportBundle(f, nil),
		application.NewCmdDeploy(f, nil),
		application.NewCmdAddUnit(f, nil),
		application.NewCmdConstraints(f, nil),
		application.NewCmdSetConstraints(f, nil),
		machine.NewCmdAdd(f, nil),
		relation.NewCmdIntegrate(f, nil),
		relation.NewCmdRemove(f, nil),
		unit.NewCmdRemove(f, nil),
		application.NewCmdRemove(f, nil),
		machine.NewCmdRemove(f, nil),
		status.NewCmdStatus(f, nil),
		unit.NewCmdShow(f, nil),
		application.NewCmdShow(f, nil),
		machine.NewCmdShow(f, nil),
		machine.NewCmdList(f, nil),
		waitfor.NewCmdWaitFor(f, nil),
		model.NewCmdDebugLog(f, nil),
		unit.NewCmdResolved(f, nil),
		machine.NewCmdRetryProvisioning(f, nil),
		application.NewCmdConfig(f, nil),
		application.NewCmdTrust(f, nil),
		application.NewCmdRefresh(f, nil),
		resourcecmd.NewCmdResources(f, nil),
		resourcecmd.NewCmdAttachResource(f, nil),
		application.NewCmdExpose(f, nil),
		application.NewCmdUnexpose(f, nil),
		versioncmd.NewCmdVersion(f, nil),
		action.NewCmdRun(f, nil),
		action.NewCmdExec(f, nil),
		action.NewCmdShowTask(f, nil),
		action.NewCmdOperations(f, nil),
		action.NewCmdShowOperation(f, nil),
		action.NewCmdCancelTask(f, nil),
		action.NewCmdActions(f, nil),
		action.NewCmdShowAction(f, nil),
		sshcmd.NewCmdSSH(f, nil),
		sshcmd.NewCmdSCP(f, nil),
		sshcmd.NewCmdAddSSHKey(f, nil),
		sshcmd.NewCmdRemoveSSHKey(f, nil),
		sshcmd.NewCmdSSHKeys(f, nil),
		completion.NewCmd(func() io.Writer { return f.IO.Out }),
	)
	completion.Register(cmd, f.CompletionSource())
	return cmd
}

var (
	unknownShorthandRe = regexp.MustCompile(`^unknown shorthand flag: '(.)' in .*$`)
	needsArgShortRe    = regexp.MustCompile(`^flag needs an argument: '(.)' in .*$`)
	invalidArgRe       = regexp.MustCompile(`^invalid argument (".*") for "(?:-., )?(--[^"]+)" flag: (.*)$`)
)

// jujuFlagError rewrites pflag's messages in the words of Juju's gnuflag ("option provided but
// not defined: --x").
func jujuFlagError(err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: "):
		return errors.New("option provided but not defined: " + strings.TrimPrefix(msg, "unknown flag: "))
	case unknownShorthandRe.MatchString(msg):
		return errors.New("option provided but not defined: -" + unknownShorthandRe.FindStringSubmatch(msg)[1])
	case needsArgShortRe.MatchString(msg):
		return errors.New("option needs an argument: -" + needsArgShortRe.FindStringSubmatch(msg)[1])
	case strings.HasPrefix(msg, "flag needs an argument: "):
		return errors.New("option needs an argument: " + strings.TrimPrefix(msg, "flag needs an argument: "))
	case invalidArgRe.MatchString(msg):
		m := invalidArgRe.FindStringSubmatch(msg)
		return fmt.Errorf("invalid value %s for option %s: %s", m[1], m[2], m[3])
	}
	return err
}

// Main runs juju with args (without the program name) on streams s and returns the exit code:
// 0 success, 2 usage error, 1 any other failure. Errors are printed as "ERROR <msg>" on stderr.
func Main(args []string, s *output.Streams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := cmdutil.NewFactory(s)
	defer f.Close()
	return run(ctx, NewCmdRoot(f), args, s)
}

func run(ctx context.Context, cmd *cobra.Command, args []string, s *output.Streams) int {
	cmd.SetArgs(args)
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.InitDefaultHelpCmd()
	err := misplacedCommand(cmd, args)
	if err == nil {
		_, err = cmd.ExecuteContextC(ctx)
	}
	if err == nil {
		return exitOK
	}
	if errors.Is(err, cmdutil.ErrSilent) {
		return exitError
	}
	// juju ssh exits as ssh did, which has said on stderr what went wrong.
	var passthrough interface{ PassthroughExitCode() int }
	if errors.As(err, &passthrough) {
		return passthrough.PassthroughExitCode()
	}
	prefix := "ERROR"
	if s.Color {
		prefix = output.Paint(s, output.Red, prefix)
	}
	fmt.Fprintf(s.ErrOut, "%s %s\n", prefix, err)
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) {
		return exitUsage
	}
	return exitError
}
