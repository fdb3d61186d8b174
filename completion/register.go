package completion

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/client"
)

// Timeout bounds everything one Tab asks of the controller (dial, TLS handshake and the call), so
// that a dead or unreachable controller costs at most this much before completion gives
// nothing. What remains of the 300 ms a Tab may take goes to starting the process. A source may
// set another (JUJU_COMPLETION_TIMEOUT, for a controller far away).
const Timeout = 200 * time.Millisecond

// Source is where completion finds names: the local client store, which needs no network, and
// the controller, asked through one CompleteNames call per kind bounded by ctx.
type Source interface {
	// Controllers lists the controllers of the local client store.
	Controllers() ([]string, error)
	// StoreModels lists the models the local client store knows of controller.
	StoreModels(controller string) ([]string, error)
	// Target resolves the controller and model a command line means (its -m and -c flags, the
	// environment, the store).
	Target(flags *pflag.FlagSet) (controller, model string, err error)
	// Names lists the names of one kind starting with prefix.
	Names(ctx context.Context, controller, model string, kind client.NameKind, prefix string) ([]string, error)
	// Timeout replaces Timeout when positive.
	Timeout() time.Duration
	// Repository is where deploy looks bare charm names up ($JUJU_REPOSITORY; "" when unset).
	Repository() string
}

// ValuesAnnotation on a flag lists the values its completion offers, for flags whose values
// are a fixed set (`--format` is read from its usage, "(json|tabular|yaml)", when it has neither
// this annotation nor a completion function of its own).
const ValuesAnnotation = "juju_completion_values"

// Register walks the command tree under root and attaches completion by command and flag name,
// so that the commands themselves need not know about it: positional arguments get live names
// from the controller (units, applications, machines, endpoints, models, ssh and scp targets) or
// controllers from the store; flags get their values (--format, --base, --constraints keys, -m
// models, -c controllers, --to machines, debug-log's --include and --exclude entities).
// Completion functions a command registered itself are kept. Errors are swallowed: completion
// must never print into the shell, it just offers nothing.
func Register(root *cobra.Command, src Source) {
	c := &completer{src: src}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		c.registerArgs(cmd)
		cmd.Flags().VisitAll(func(fl *pflag.Flag) { c.registerFlag(cmd, fl) })
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completer answers completion requests from a source.
type completer struct {
	src Source
}

// argSpec completes a command's next positional argument, given those before it.
type argSpec func(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

const noFiles = cobra.ShellCompDirectiveNoFileComp

// argSpecs lists, by command name, what the positional arguments are.
var argSpecs = map[string]argSpec{
	"show-unit":                repeated(client.NameUnit),
	"remove-unit":              repeated(client.NameUnit),
	"resolved":                 unitsOrMachines,
	"show-application":         repeated(client.NameApplication),
	"remove-application":       repeated(client.NameApplication),
	"add-unit":                 first(client.NameApplication),
	"constraints":              first(client.NameApplication),
	"config":                   configKeys,
	"trust":                    first(client.NameApplication),
	"refresh":                  first(client.NameApplication),
	"expose":                   first(client.NameApplication),
	"unexpose":                 first(client.NameApplication),
	"attach-resource":          first(client.NameApplication),
	"resources":                first(client.NameApplication),
	"set-constraints":          applicationThenConstraints,
	"show-machine":             repeated(client.NameMachine),
	"remove-machine":           repeated(client.NameMachine),
	"retry-provisioning":       repeated(client.NameMachine),
	"integrate":                endpoints,
	"remove-relation":          endpoints,
	"status":                   selectors,
	"wait-for":                 waitFor,
	"switch":                   switchTarget,
	"destroy-model":            firstModel,
	"show-model":               firstModel,
	"kill-controller":          firstController,
	"destroy-controller":       firstController,
	"show-controller":          repeatedControllers,
	"remove-controller-member": memberIDs,
	"ssh":                      sshTarget,
	"scp":                      scpLocation,
	"deploy":                   deployCharm,
	"set-model-constraints": func(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return constraintWords(args, toComplete)
	},
}

// fileArgs are the commands whose arguments are paths; every other command without completion
// of its own completes no files.
var fileArgs = []string{"help"}

func (c *completer) registerArgs(cmd *cobra.Command) {
	if cmd.ValidArgsFunction != nil || len(cmd.ValidArgs) > 0 || !cmd.Runnable() {
		return
	}
	if spec, ok := argSpecs[cmd.Name()]; ok {
		cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return spec(c, cmd, args, toComplete)
		}
		return
	}
	if !slices.Contains(fileArgs, cmd.Name()) && cmd.HasParent() {
		cmd.ValidArgsFunction = cobra.NoFileCompletions
	}
}

func (c *completer) registerFlag(cmd *cobra.Command, fl *pflag.Flag) {
	if _, ok := cmd.GetFlagCompletionFunc(fl.Name); ok {
		return
	}
	var fn cobra.CompletionFunc
	switch values := fl.Annotations[ValuesAnnotation]; {
	case len(values) > 0:
		fn = fixed(values)
	case fl.Name == "format":
		if values := usageValues(fl.Usage); len(values) > 0 {
			fn = fixed(values)
		}
	case fl.Name == "base":
		fn = fixed(bases())
	case fl.Name == "constraints":
		fn = func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return constraintValue(toComplete)
		}
	case fl.Name == "model":
		fn = func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.models(cmd, toComplete, false), noFiles
		}
	case fl.Name == "controller":
		fn = func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.controllers(toComplete), noFiles
		}
	case (fl.Name == "include" || fl.Name == "exclude") && cmd.Name() == "debug-log":
		fn = func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.debugLogEntities(cmd, toComplete)
		}
	case fl.Name == "to":
		fn = func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.names(cmd, client.NameMachine, toComplete), noFiles
		}
	}
	if fn != nil {
		_ = cmd.RegisterFlagCompletionFunc(fl.Name, fn)
	}
}

func fixed(values []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, noFiles
	}
}

// repeated completes names of kind for every argument, leaving out those already given.
func repeated(kind client.NameKind) argSpec {
	return func(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return without(c.names(cmd, kind, toComplete), args), noFiles
	}
}

// first completes names of kind for the first argument only.
func first(kind client.NameKind) argSpec {
	return func(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, noFiles
		}
		return c.names(cmd, kind, toComplete), noFiles
	}
}

func applicationThenConstraints(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return c.names(cmd, client.NameApplication, toComplete), noFiles
	}
	return constraintWords(args[1:], toComplete)
}

// endpoints completes the two <application>[:<endpoint>] arguments of integrate and
// remove-relation: applications (no space after, so ":" can follow), then after "app:" the
// application's endpoints.
func endpoints(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) >= 2 {
		return nil, noFiles
	}
	if strings.Contains(toComplete, ":") {
		return c.names(cmd, client.NameEndpoint, toComplete), noFiles
	}
	return c.names(cmd, client.NameApplication, toComplete), noFiles | cobra.ShellCompDirectiveNoSpace
}

// configKeys completes "config <application> [<option>[=<value>] ...]": the application, then
// its option names not given yet (no space after, so "=value" can follow).
func configKeys(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return c.names(cmd, client.NameApplication, toComplete), noFiles
	}
	if strings.Contains(toComplete, "=") {
		return nil, noFiles
	}
	app := args[0]
	var given []string
	for _, a := range args[1:] {
		key, _, _ := strings.Cut(a, "=")
		given = append(given, key)
	}
	var keys []string
	for _, name := range c.names(cmd, client.NameConfigKey, app+":"+toComplete) {
		if key, ok := strings.CutPrefix(name, app+":"); ok {
			keys = append(keys, key)
		}
	}
	return without(keys, given), noFiles | cobra.ShellCompDirectiveNoSpace
}

// selectors completes status selectors by what the word looks like so far: machines for a digit,
// units after "/", else applications and units (and machines for an empty word).
func selectors(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var kinds []client.NameKind
	switch {
	case toComplete == "":
		kinds = []client.NameKind{client.NameApplication, client.NameUnit, client.NameMachine}
	case isDigit(toComplete[0]):
		kinds = []client.NameKind{client.NameMachine}
	case strings.Contains(toComplete, "/"):
		kinds = []client.NameKind{client.NameUnit}
	default:
		kinds = []client.NameKind{client.NameApplication, client.NameUnit}
	}
	return without(c.names(cmd, kinds[0], toComplete, kinds[1:]...), args), noFiles
}

// unitsOrMachines completes the arguments of resolved: machines for a digit, else units.
func unitsOrMachines(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	kind := client.NameUnit
	if toComplete != "" && isDigit(toComplete[0]) {
		kind = client.NameMachine
	}
	return without(c.names(cmd, kind, toComplete), args), noFiles
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// waitFor completes "wait-for <model|application|unit|machine> <name>".
func waitFor(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	kinds := map[string]client.NameKind{"application": client.NameApplication, "unit": client.NameUnit, "machine": client.NameMachine}
	switch len(args) {
	case 0:
		return []string{"application", "machine", "model", "unit"}, noFiles
	case 1:
		if args[0] == "model" {
			return c.models(cmd, toComplete, strings.Contains(toComplete, ":")), noFiles
		}
		if kind, ok := kinds[args[0]]; ok {
			return c.names(cmd, kind, toComplete), noFiles
		}
	}
	return nil, noFiles
}

// switchTarget completes "switch [<controller>|<controller>:<model>|<model>]".
func switchTarget(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	if strings.Contains(toComplete, ":") {
		return c.models(cmd, toComplete, true), noFiles
	}
	return append(c.controllers(toComplete), c.models(cmd, toComplete, false)...), noFiles
}

func firstModel(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return c.models(cmd, toComplete, false), noFiles
}

func firstController(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return c.controllers(toComplete), noFiles
}

// repeatedControllers completes controller names for every argument, leaving out those given.
func repeatedControllers(c *completer, _ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return without(c.controllers(toComplete), args), noFiles
}

// MemberSource is a Source that can also list a controller's members, for
// remove-controller-member's argument; a Source without it completes no member ids.
type MemberSource interface {
	// ControllerMembers lists the ids of the controller's members.
	ControllerMembers(ctx context.Context, controller string) ([]string, error)
}

// memberIDs completes the member id of remove-controller-member from the controller the
// command line points at (-c), within completion's deadline.
func memberIDs(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ms, ok := c.src.(MemberSource)
	if len(args) > 0 || !ok {
		return nil, noFiles
	}
	ctrl, _, err := c.src.Target(cmd.Flags())
	if err != nil || ctrl == "" {
		return nil, noFiles
	}
	ctx, cancel := c.deadline(cmd)
	defer cancel()
	ids, err := ms.ControllerMembers(ctx, ctrl)
	if err != nil {
		return nil, noFiles
	}
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, toComplete) {
			out = append(out, id)
		}
	}
	return out, noFiles
}

// deadline bounds what one Tab asks of the controller: Timeout, or the source's own.
func (c *completer) deadline(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	timeout := c.src.Timeout()
	if timeout <= 0 {
		timeout = Timeout
	}
	return context.WithTimeout(parent, timeout)
}

// names asks the controller the command line points at for names of kind (and of more kinds,
// asked at the same time under the same deadline) starting with prefix. Nothing on any error.
func (c *completer) names(cmd *cobra.Command, kind client.NameKind, prefix string, more ...client.NameKind) []string {
	return slices.Concat(c.namesByKind(cmd, prefix, append([]client.NameKind{kind}, more...))...)
}

// namesByKind is names, kind by kind: one list for each of kinds, in their order.
func (c *completer) namesByKind(cmd *cobra.Command, prefix string, kinds []client.NameKind) [][]string {
	ctrl, model, err := c.src.Target(cmd.Flags())
	if err != nil || ctrl == "" {
		return make([][]string, len(kinds))
	}
	return c.askEach(cmd, ctrl, model, prefix, kinds)
}

func (c *completer) ask(cmd *cobra.Command, ctrl, model, prefix string, kinds []client.NameKind) []string {
	return slices.Concat(c.askEach(cmd, ctrl, model, prefix, kinds)...)
}

func (c *completer) askEach(cmd *cobra.Command, ctrl, model, prefix string, kinds []client.NameKind) [][]string {
	ctx, cancel := c.deadline(cmd)
	defer cancel()
	results := make([][]string, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Go(func() {
			names, err := c.src.Names(ctx, ctrl, model, kind, prefix)
			if err == nil {
				results[i] = names
			}
		})
	}
	wg.Wait()
	return results
}

// models completes model names: of the controller named before a ":" in the word (qualified
// as "controller:model"), else of the current one (bare unless qualified is set). The
// controller's own list comes first; the store's is the fallback when it does not answer.
func (c *completer) models(cmd *cobra.Command, toComplete string, qualified bool) []string {
	ctrl, prefix, hasCtrl := strings.Cut(toComplete, ":")
	if !hasCtrl {
		prefix = toComplete
		var err error
		if ctrl, _, err = c.src.Target(cmd.Flags()); err != nil || ctrl == "" {
			return nil
		}
	}
	names := c.ask(cmd, ctrl, "", prefix, []client.NameKind{client.NameModel})
	if names == nil {
		stored, _ := c.src.StoreModels(ctrl)
		for _, n := range stored {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
	}
	if hasCtrl || qualified {
		for i, n := range names {
			names[i] = ctrl + ":" + n
		}
	}
	return names
}

// controllers lists the controllers of the local store starting with prefix.
func (c *completer) controllers(prefix string) []string {
	names, err := c.src.Controllers()
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// without drops the names already given as arguments.
func without(names, args []string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args, n) })
}
