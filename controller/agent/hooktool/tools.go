package hooktool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v2"
)

// tool is one hook tool: its usage (after its name), its purpose and the function that parses
// its arguments and calls the Context.
type tool struct {
	usage   string
	purpose string
	run     func(t *invocation) error
}

// tools are the hook tools this controller answers; unsupportedTools (unsupported.go) are
// installed beside them so that a hook gets a clear error rather than "command not found".
var tools = map[string]tool{
	"relation-get":            {"[options] [<key>|-] [<unit-or-app>]", "Print a unit's or an application's settings in a relation.", relationGet},
	"relation-set":            {"[options] <key>=<value> ...", "Set this unit's (--app: its application's) settings in a relation (key= deletes).", relationSet},
	"relation-ids":            {"[options] [<endpoint>]", "List the relation ids of an endpoint.", relationIDs},
	"relation-list":           {"[options]", "List the remote units in a relation (--app: the remote application).", relationList},
	"relation-model-get":      {"[options]", "Print the model of the other end of a relation.", relationModelGet},
	"network-get":             {"[options] <binding>", "Print the network config of a binding.", networkGet},
	"goal-state":              {"[options]", "Print the goal status of the application's units and related applications.", goalState},
	"credential-get":          {"[options]", "Print the cloud specification of the unit's model (trusted applications only).", credentialGet},
	"status-set":              {"[options] <maintenance|blocked|waiting|active> [<message>]", "Set the workload status.", statusSet},
	"status-get":              {"[options]", "Print the workload status.", statusGet},
	"application-version-set": {"<version>", "Set the version of the deployed workload.", applicationVersionSet},
	"juju-log":                {"[options] <message> ...", "Write a message to the unit's log.", jujuLog},
	"config-get":              {"[options] [<key>]", "Print the application's configuration.", configGet},
	"unit-get":                {"[options] private-address|public-address", "Print a unit setting.", unitGet},
	"open-port":               {"<port>[/<protocol>] | <from>-<to>[/<protocol>] | icmp", "Open a port or port range.", openPort},
	"close-port":              {"<port>[/<protocol>] | <from>-<to>[/<protocol>] | icmp", "Close a port or port range.", closePort},
	"opened-ports":            {"[options]", "List the ports this unit has opened.", openedPorts},
	"is-leader":               {"[options]", "Print whether this unit leads its application.", isLeader},
	"leader-get":              {"[options] [<key>|-]", "Print the application's leader settings.", leaderGet},
	"leader-set":              {"<key>=<value> ...", "Set the application's leader settings (leader only; key= deletes).", leaderSet},
	"state-get":               {"[options] [<key>|-]", "Print the charm's state kept by the controller.", stateGet},
	"state-set":               {"[options] <key>=<value> ...", "Set values of the charm's state kept by the controller (key= deletes).", stateSet},
	"state-delete":            {"<key>", "Delete a value of the charm's state kept by the controller.", stateDelete},
	"resource-get":            {"<resource name>", "Get the path to the locally cached resource file.", resourceGet},
	"action-get":              {"[options] [<key>[.<key>.<key>...]]", "Get action parameters.", actionGet},
	"action-set":              {"<key>=<value> [<key>=<value> ...]", "Set action results.", actionSet},
	"action-log":              {"<message>", "Record a progress message for the current action.", actionLog},
	"action-fail":             {"[\"<failure message>\"]", "Set action fail status with message.", actionFail},
}

func init() {
	for name, why := range unsupportedTools {
		tools[name] = tool{"[options] ...", "Not supported by this controller: " + why + ".", unsupported(name, why)}
	}
}

// Names returns the names of the hook tools, sorted: those answered and those refused.
func Names() []string {
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// IsTool reports whether name is a hook tool.
func IsTool(name string) bool {
	_, ok := tools[name]
	return ok
}

// invocation is one run of a tool: its flags, its Context and what it prints.
type invocation struct {
	ctx    context.Context
	c      Context
	fs     *pflag.FlagSet
	args   []string
	file   []byte // relation-set and state-set --file contents, read by the client
	help   *bool
	format *string
	out    bytes.Buffer
}

// usageError is a wrong invocation: exit 2 with the usage line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

var errHelp = errors.New("help requested")

// runTool runs tool name for the hook behind c and returns what to print and the exit code:
// 0 done, 1 the Context failed, 2 wrong arguments.
func runTool(ctx context.Context, c Context, name string, args []string, file []byte) (stdout, stderr []byte, code int) {
	tl, ok := tools[name]
	if !ok {
		return nil, fmt.Appendf(nil, "ERROR unknown hook tool %q\n", name), 1
	}
	t := &invocation{ctx: ctx, c: c, fs: pflag.NewFlagSet(name, pflag.ContinueOnError), args: args, file: file}
	t.fs.SetOutput(io.Discard)
	t.fs.Usage = func() {}
	t.fs.SortFlags = true
	t.help = t.fs.BoolP("help", "h", false, "show this help")
	err := tl.run(t)
	var ue usageError
	switch {
	case err == nil:
		return t.out.Bytes(), nil, 0
	case errors.Is(err, errHelp):
		return fmt.Appendf(nil, "Usage: %s %s\n\n%s\n\nOptions:\n%s", name, tl.usage, tl.purpose, t.fs.FlagUsages()), nil, 0
	case errors.As(err, &ue):
		return nil, fmt.Appendf(nil, "ERROR %s\nUsage: %s %s\n", ue.msg, name, tl.usage), 2
	default:
		return nil, fmt.Appendf(nil, "ERROR %v\n", err), 1
	}
}

// parse parses the flags the tool defined, then checks that there are at most max arguments.
// Flags may follow arguments ("relation-get -r 3 - mysql/0 --app --format=json", as ops runs
// it); everything after "--" is an argument.
func (t *invocation) parse(max int) error {
	if err := t.fs.Parse(t.args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if *t.help {
		return errHelp
	}
	if t.format != nil && !slices.Contains(formats, *t.format) {
		return usagef("invalid format %q, expected one of %v", *t.format, formats)
	}
	if args := t.fs.Args(); len(args) > max {
		return usagef("unrecognized args: %q", args[max:])
	}
	return nil
}

// arg returns the i-th argument, "" when absent.
func (t *invocation) arg(i int) string {
	if i < t.fs.NArg() {
		return t.fs.Arg(i)
	}
	return ""
}

var formats = []string{"smart", "json", "yaml"}

func (t *invocation) formatFlag() {
	t.format = t.fs.String("format", "smart", "output format: smart, json or yaml")
}

// ignoredFormatFlag accepts and ignores --format, which Juju still takes (deprecated) on some
// tools that print nothing.
func (t *invocation) ignoredFormatFlag() {
	t.fs.String("format", "", "ignored (deprecated)")
	_ = t.fs.MarkHidden("format")
}

// formatName is the chosen --format.
func (t *invocation) formatName() string {
	if t.format == nil {
		return "smart"
	}
	return *t.format
}

// write prints v in the chosen format, as Juju does. json: v as JSON. yaml: v as YAML, nothing
// for nil. smart: strings as they are (nothing for ""), booleans True/False, lists of strings
// one item a line, nil nothing, anything else YAML.
func (t *invocation) write(v any) error {
	switch t.formatName() {
	case "json":
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		t.out.Write(append(b, '\n'))
		return nil
	case "yaml":
		return t.writeYAML(v)
	}
	switch v := v.(type) {
	case string:
		if v != "" {
			t.out.WriteString(v + "\n")
		}
	case []string:
		if len(v) > 0 {
			t.out.WriteString(strings.Join(v, "\n") + "\n")
		}
	case bool:
		t.out.WriteString(map[bool]string{true: "True\n", false: "False\n"}[v])
	default:
		return t.writeYAML(v)
	}
	return nil
}

func (t *invocation) writeYAML(v any) error {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b) // the YAML of Juju's hook tools (yaml.v2): lists flush under their key
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if out := bytes.TrimRight(b.Bytes(), "\n"); len(out) > 0 {
		t.out.Write(append(out, '\n'))
	}
	return nil
}

// pairs parses key=value arguments into values.
func pairs(args []string, values map[string]string) error {
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return usagef("expected \"key=value\", got %q", a)
		}
		values[k] = v
	}
	return nil
}

// fileFlag defines --file, whose contents the client sent (see client.go's fileTools).
func (t *invocation) fileFlag() *string {
	return t.fs.String("file", "", `read settings from a YAML map in this file ("-": stdin); arguments override it`)
}

// settingsFrom reads the YAML map of --file and overrides it with key=value arguments.
func (t *invocation) settingsFrom(file string) (map[string]string, error) {
	values := map[string]string{}
	if file != "" {
		// The client sent the file's contents (yaml.v2 reads any scalar as a string, null as "").
		if err := yaml.Unmarshal(t.file, &values); err != nil {
			return nil, fmt.Errorf("reading --file %s: %w", file, err)
		}
		if values == nil {
			values = map[string]string{}
		}
	}
	if err := pairs(t.fs.Args(), values); err != nil {
		return nil, err
	}
	return values, nil
}

// settings prints a settings map, or one key of it ("-" or "" for all; a missing key prints
// nothing in smart and yaml format and null in json).
func (t *invocation) settings(m map[string]string, key string) error {
	if key == "" || key == "-" {
		if m == nil {
			m = map[string]string{}
		}
		return t.write(m)
	}
	if v, ok := m[key]; ok {
		return t.write(v)
	}
	return t.write(nil)
}

func applicationVersionSet(t *invocation) error {
	if err := t.parse(1); err != nil {
		return err
	}
	if t.fs.NArg() == 0 {
		return usagef("no version specified")
	}
	return t.c.ApplicationVersionSet(t.ctx, t.arg(0))
}

var logLevels = []string{"TRACE", "DEBUG", "INFO", "WARNING", "ERROR"}

func jujuLog(t *invocation) error {
	level := t.fs.StringP("log-level", "l", "INFO", "log level: TRACE, DEBUG, INFO, WARNING or ERROR")
	debug := t.fs.Bool("debug", false, "log at DEBUG level")
	t.ignoredFormatFlag()
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	if t.fs.NArg() == 0 {
		return usagef("no message specified")
	}
	lvl := strings.ToUpper(*level)
	if lvl == "WARN" {
		lvl = "WARNING"
	}
	if *debug {
		lvl = "DEBUG"
	}
	if !slices.Contains(logLevels, lvl) {
		return usagef("invalid log level %q, expected one of %v", *level, logLevels)
	}
	return t.c.Log(t.ctx, lvl, strings.Join(t.fs.Args(), " "))
}

func configGet(t *invocation) error {
	all := t.fs.BoolP("all", "a", false, "print all keys, also those without a value")
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	key := t.arg(0)
	if *all && key != "" {
		return usagef("cannot use argument --all together with key %q", key)
	}
	config, err := t.c.Config(t.ctx)
	if err != nil {
		return err
	}
	if key != "" {
		return t.write(config[key]) // a boolean prints True or False in smart format, as in Juju
	}
	set := map[string]any{}
	for k, v := range config {
		if v != nil || *all {
			set[k] = v
		}
	}
	return t.write(set)
}

func unitGet(t *invocation) error {
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	switch key := t.arg(0); key {
	case "private-address":
		return t.write(t.c.PrivateAddress())
	case "public-address":
		return t.write(t.c.PublicAddress())
	case "":
		return usagef("no setting specified")
	default:
		return usagef("unknown setting %q", key)
	}
}

func openPort(t *invocation) error {
	port, err := portArg(t)
	if err != nil {
		return err
	}
	return t.c.OpenPort(t.ctx, port)
}

func closePort(t *invocation) error {
	port, err := portArg(t)
	if err != nil {
		return err
	}
	return t.c.ClosePort(t.ctx, port)
}

// portArg parses the port argument of open-port and close-port.
func portArg(t *invocation) (string, error) {
	if err := t.parse(1); err != nil {
		return "", err
	}
	if t.fs.NArg() == 0 {
		return "", usagef("no port or range specified")
	}
	port, err := normalizePort(t.arg(0))
	if err != nil {
		return "", usageError{err.Error()}
	}
	return port, nil
}

// normalizePort turns "80", "80/TCP", "8000-8005/udp" or "icmp" into "80/tcp",
// "8000-8005/udp" or "icmp".
func normalizePort(s string) (string, error) {
	if strings.EqualFold(s, "icmp") {
		return "icmp", nil
	}
	ports, proto, ok := strings.Cut(s, "/")
	proto = strings.ToLower(proto)
	if !ok {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" {
		return "", fmt.Errorf("invalid protocol %q in %q, expected tcp or udp", proto, s)
	}
	from, to, isRange := strings.Cut(ports, "-")
	if !isRange {
		to = from
	}
	lo, err1 := strconv.Atoi(from)
	hi, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || hi < 1 || lo > 65535 {
		return "", fmt.Errorf("invalid port %q, expected a port or range within 1-65535", s)
	}
	if lo > hi {
		return "", fmt.Errorf("invalid port range %q: %d is greater than %d", s, lo, hi)
	}
	if lo == hi {
		return fmt.Sprintf("%d/%s", lo, proto), nil
	}
	return fmt.Sprintf("%d-%d/%s", lo, hi, proto), nil
}

func openedPorts(t *invocation) error {
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	ports, err := t.c.OpenedPorts(t.ctx)
	if err != nil {
		return err
	}
	return t.write(nonNil(ports))
}

func isLeader(t *invocation) error {
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	leader, err := t.c.IsLeader(t.ctx)
	if err != nil {
		return err
	}
	return t.write(leader)
}

func leaderGet(t *invocation) error {
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	m, err := t.c.LeaderGet(t.ctx)
	if err != nil {
		return err
	}
	return t.settings(m, t.arg(0))
}

func leaderSet(t *invocation) error {
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	values := map[string]string{}
	if err := pairs(t.fs.Args(), values); err != nil {
		return err
	}
	return t.c.LeaderSet(t.ctx, values)
}

func goalState(t *invocation) error {
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	gs, err := t.c.GoalState(t.ctx)
	if err != nil {
		return err
	}
	// Always both keys, as maps: ops reads goal-state's "units" (planned_units).
	out := GoalState{Units: map[string]GoalStatus{}, Relations: map[string]map[string]GoalStatus{}}
	if gs != nil {
		for k, v := range gs.Units {
			out.Units[k] = v
		}
		for k, v := range gs.Relations {
			if v == nil {
				v = map[string]GoalStatus{}
			}
			out.Relations[k] = v
		}
	}
	return t.write(out)
}

// nonNil makes an empty list print as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
