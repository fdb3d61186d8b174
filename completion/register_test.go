package completion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/output"
)

// fakeSource answers from maps and records the calls.
type fakeSource struct {
	names   map[client.NameKind][]string
	models  map[string][]string // the store's models by controller
	failing bool                // Names fails, as a dead controller does
	repo    string              // $JUJU_REPOSITORY

	mu    sync.Mutex
	calls []string // "controller model kind prefix"
	slack []time.Duration
}

func (f *fakeSource) Timeout() time.Duration { return 0 }

func (f *fakeSource) Repository() string { return f.repo }

func (f *fakeSource) Controllers() ([]string, error) { return []string{"dead", "test"}, nil }

func (f *fakeSource) StoreModels(controller string) ([]string, error) {
	return f.models[controller], nil
}

// Target reads -m [controller:]model and -c as the factory does, with "test" and "default"
// current.
func (f *fakeSource) Target(flags *pflag.FlagSet) (string, string, error) {
	ctrl, model := "test", "default"
	if fl := flags.Lookup("controller"); fl != nil && fl.Changed {
		ctrl = fl.Value.String()
	}
	if fl := flags.Lookup("model"); fl != nil && fl.Changed {
		model = fl.Value.String()
		if c, m, ok := strings.Cut(model, ":"); ok {
			ctrl, model = c, m
		}
	}
	return ctrl, model, nil
}

func (f *fakeSource) Names(ctx context.Context, controller, model string, kind client.NameKind, prefix string) ([]string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %s %s", controller, model, kind, prefix))
	if d, ok := ctx.Deadline(); ok {
		f.slack = append(f.slack, time.Until(d))
	}
	f.mu.Unlock()
	if f.failing {
		return nil, errors.New("cannot connect")
	}
	var out []string
	for _, n := range f.names[kind] {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeSource) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := slices.Clone(f.calls)
	slices.Sort(calls)
	f.calls = nil
	return calls
}

// testTree is a command tree shaped like juju's, with no completion of its own except what the
// output package and one command register.
func testTree(src Source) *cobra.Command {
	root := &cobra.Command{Use: "juju", RunE: func(*cobra.Command, []string) error { return nil }}
	run := func(*cobra.Command, []string) error { return nil }
	add := func(use string, flags ...string) *cobra.Command {
		cmd := &cobra.Command{Use: use, RunE: run}
		for _, fl := range flags {
			switch fl {
			case "model":
				cmd.Flags().StringP("model", "m", "", "Model to operate in")
			case "controller":
				cmd.Flags().StringP("controller", "c", "", "Controller to operate in")
			default:
				cmd.Flags().String(fl, "", "")
			}
		}
		root.AddCommand(cmd)
		return cmd
	}
	for _, use := range []string{"show-unit", "remove-unit", "resolved", "show-machine", "integrate", "set-constraints", "wait-for", "switch", "destroy-model", "trust", "config"} {
		add(use, "model")
	}
	add("kill-controller")
	add("show-controller")
	add("remove-controller-member", "controller")
	add("models", "controller")
	deploy := add("deploy", "model", "constraints", "base", "to")
	deploy.Flags().String("format", "", "Specify output format (plain|fancy)")
	status := add("status", "model")
	var format output.Format
	output.AddFormatFlag(status, &format, output.Tabular)
	status.Flags().String("colour", "", "")
	_ = status.Flags().SetAnnotation("colour", ValuesAnnotation, []string{"auto", "always", "never"})
	for _, use := range []string{"ssh", "scp"} {
		// Flags after the target (ssh) or among the locations (scp) are ssh's and scp's own.
		add(use, "model").Flags().SetInterspersed(false)
	}
	debugLog := add("debug-log", "model")
	debugLog.Flags().StringArrayP("include", "i", nil, "")
	debugLog.Flags().StringArrayP("exclude", "x", nil, "")
	own := add("own")
	own.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []string{"mine"}, cobra.ShellCompDirectiveNoFileComp
	}
	relate := add("relate", "base")
	_ = relate.RegisterFlagCompletionFunc("base", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []string{"own-base"}, cobra.ShellCompDirectiveNoFileComp
	})
	Register(root, src)
	return root
}

// complete runs `juju __complete args...` and returns the candidates (without descriptions) and
// the directive.
func complete(t *testing.T, root *cobra.Command, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var directive cobra.ShellCompDirective
	if _, err := fmt.Sscanf(lines[len(lines)-1], ":%d", &directive); err != nil {
		t.Fatalf("no directive in %q", out.String())
	}
	var got []string
	for _, l := range lines[:len(lines)-1] {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got, directive
}

const (
	noFileComp = cobra.ShellCompDirectiveNoFileComp
	noSpace    = cobra.ShellCompDirectiveNoSpace
)

func liveSource() *fakeSource {
	return &fakeSource{
		names: map[client.NameKind][]string{
			client.NameApplication: {"mysql", "wordpress"},
			client.NameUnit:        {"mysql/0", "wordpress/0", "wordpress/1", "wordpress/10"},
			client.NameMachine:     {"0", "1", "10"},
			client.NameModel:       {"controller", "default", "other"},
			client.NameEndpoint:    {"wordpress:db", "wordpress:website"},
			client.NameConfigKey:   {"wordpress:blog-title", "wordpress:fail-hook", "wordpress:trust"},
		},
		models: map[string][]string{"test": {"cached", "default"}, "dead": {"old"}},
	}
}

func TestComplete(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      []string
		directive cobra.ShellCompDirective
		calls     []string // Names calls, sorted
	}{
		// Live names: one call, for the model of the command line.
		{[]string{"show-unit", "wordpress/1"}, []string{"wordpress/1", "wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/1"}},
		{[]string{"show-unit", "-m", "dead:prod", ""}, []string{"mysql/0", "wordpress/0", "wordpress/1", "wordpress/10"}, noFileComp, []string{"dead prod NAME_KIND_UNIT "}},
		{[]string{"remove-unit", "wordpress/0", "wordpress/"}, []string{"wordpress/1", "wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/"}},
		{[]string{"show-machine", "1"}, []string{"1", "10"}, noFileComp, []string{"test default NAME_KIND_MACHINE 1"}},
		{[]string{"integrate", "wo"}, []string{"wordpress"}, noFileComp | noSpace, []string{"test default NAME_KIND_APPLICATION wo"}},
		{[]string{"integrate", "mysql", "wordpress:w"}, []string{"wordpress:website"}, noFileComp, []string{"test default NAME_KIND_ENDPOINT wordpress:w"}},
		{[]string{"integrate", "mysql", "wordpress", ""}, nil, noFileComp, nil},
		// config: the application, then its option names not given yet, "=" may follow.
		{[]string{"config", "wo"}, []string{"wordpress"}, noFileComp, []string{"test default NAME_KIND_APPLICATION wo"}},
		{[]string{"config", "wordpress", ""}, []string{"blog-title", "fail-hook", "trust"}, noFileComp | noSpace, []string{"test default NAME_KIND_CONFIG_KEY wordpress:"}},
		{[]string{"config", "wordpress", "blog-title=x", "f"}, []string{"fail-hook"}, noFileComp | noSpace, []string{"test default NAME_KIND_CONFIG_KEY wordpress:f"}},
		{[]string{"config", "wordpress", "trust="}, nil, noFileComp, nil},
		{[]string{"status", ""}, []string{"mysql", "wordpress", "mysql/0", "wordpress/0", "wordpress/1", "wordpress/10", "0", "1", "10"}, noFileComp,
			[]string{"test default NAME_KIND_APPLICATION ", "test default NAME_KIND_MACHINE ", "test default NAME_KIND_UNIT "}},
		{[]string{"status", "wordpress/1"}, []string{"wordpress/1", "wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/1"}},
		{[]string{"status", "my"}, []string{"mysql", "mysql/0"}, noFileComp, []string{"test default NAME_KIND_APPLICATION my", "test default NAME_KIND_UNIT my"}},
		{[]string{"status", "1"}, []string{"1", "10"}, noFileComp, []string{"test default NAME_KIND_MACHINE 1"}},
		{[]string{"resolved", "wordpress/1", "w"}, []string{"wordpress/0", "wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT w"}},
		{[]string{"resolved", "1"}, []string{"1", "10"}, noFileComp, []string{"test default NAME_KIND_MACHINE 1"}},
		{[]string{"wait-for", ""}, []string{"application", "machine", "model", "unit"}, noFileComp, nil},
		{[]string{"wait-for", "model", "d"}, []string{"default"}, noFileComp, []string{"test  NAME_KIND_MODEL d"}},
		{[]string{"trust", "w"}, []string{"wordpress"}, noFileComp, []string{"test default NAME_KIND_APPLICATION w"}},
		{[]string{"wait-for", "unit", "my"}, []string{"mysql/0"}, noFileComp, []string{"test default NAME_KIND_UNIT my"}},
		{[]string{"set-constraints", "w"}, []string{"wordpress"}, noFileComp, []string{"test default NAME_KIND_APPLICATION w"}},
		{[]string{"set-constraints", "wordpress", "mem=1G", "c"}, []string{"container=", "cores=", "cpu-power="}, noFileComp | noSpace, nil},
		{[]string{"set-constraints", "wordpress", "mem=1G", "m"}, nil, noFileComp | noSpace, nil},
		// Models: the controller's, as [controller:]model.
		{[]string{"status", "-m", "d"}, []string{"default"}, noFileComp, []string{"test  NAME_KIND_MODEL d"}},
		{[]string{"status", "-m", "test:o"}, []string{"test:other"}, noFileComp, []string{"test  NAME_KIND_MODEL o"}},
		{[]string{"destroy-model", ""}, []string{"controller", "default", "other"}, noFileComp, []string{"test  NAME_KIND_MODEL "}},
		{[]string{"switch", ""}, []string{"dead", "test", "controller", "default", "other"}, noFileComp, []string{"test  NAME_KIND_MODEL "}},
		{[]string{"switch", "test:d"}, []string{"test:default"}, noFileComp, []string{"test  NAME_KIND_MODEL d"}},
		// Controllers: from the store, no call.
		{[]string{"kill-controller", ""}, []string{"dead", "test"}, noFileComp, nil},
		{[]string{"kill-controller", "dead", ""}, nil, noFileComp, nil},
		{[]string{"show-controller", ""}, []string{"dead", "test"}, noFileComp, nil},
		{[]string{"show-controller", "test", ""}, []string{"dead"}, noFileComp, nil},
		{[]string{"remove-controller-member", ""}, nil, noFileComp, nil}, // a source that cannot list members
		{[]string{"models", "-c", "t"}, []string{"test"}, noFileComp, nil},
		{[]string{"models", ""}, nil, noFileComp, nil},
		// Flag values.
		{[]string{"status", "--format", ""}, []string{"json", "tabular", "yaml"}, noFileComp, nil},
		{[]string{"status", "--colour", ""}, []string{"auto", "always", "never"}, noFileComp, nil},
		{[]string{"deploy", "--format", ""}, []string{"plain", "fancy"}, noFileComp, nil},
		{[]string{"deploy", "--base", ""}, []string{"ubuntu@20.04", "ubuntu@22.04", "ubuntu@24.04"}, noFileComp, nil},
		{[]string{"deploy", "--constraints", "ro"}, []string{"root-disk=", "root-disk-source="}, noFileComp | noSpace, nil},
		{[]string{"deploy", "--constraints", "arch=a"}, []string{"arch=amd64", "arch=arm64"}, noFileComp, nil},
		{[]string{"deploy", "--constraints", "mem="}, nil, noFileComp, nil},
		{[]string{"deploy", "--constraints", "mem=4G ro"}, []string{"mem=4G root-disk=", "mem=4G root-disk-source="}, noFileComp | noSpace, nil},
		{[]string{"deploy", "--constraints", "mem=4G m"}, nil, noFileComp | noSpace, nil},
		{[]string{"deploy", "--to", "1"}, []string{"1", "10"}, noFileComp, []string{"test default NAME_KIND_MACHINE 1"}},
		// What others registered stays; deploy's charm is a path.
		{[]string{"own", ""}, []string{"mine"}, noFileComp, nil},
		{[]string{"relate", "--base", ""}, []string{"own-base"}, noFileComp, nil},
		{[]string{"deploy", ""}, nil, cobra.ShellCompDirectiveDefault, nil},
		// Commands and flags are cobra's.
		{[]string{"show-"}, []string{"show-controller", "show-machine", "show-unit"}, noFileComp, nil},
		{[]string{"deploy", "--con"}, []string{"--constraints"}, noFileComp, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			src := liveSource()
			got, directive := complete(t, testTree(src), tc.args...)
			if !slices.Equal(got, tc.want) || directive != tc.directive {
				t.Errorf("got %q %d, want %q %d", got, directive, tc.want, tc.directive)
			}
			if calls := src.recorded(); !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			for _, s := range src.slack {
				if s > Timeout {
					t.Errorf("call deadline %v away, more than %v", s, Timeout)
				}
			}
		})
	}
}

// A controller that does not answer gives no names and no error, only models the store knows.
func TestCompleteDeadController(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"show-unit", ""}, nil},
		{[]string{"integrate", "wordpress:"}, nil},
		{[]string{"status", ""}, nil},
		{[]string{"status", "-m", ""}, []string{"cached", "default"}},
		{[]string{"switch", "dead:"}, []string{"dead:old"}},
	} {
		src := liveSource()
		src.failing = true
		got, directive := complete(t, testTree(src), tc.args...)
		if !slices.Equal(got, tc.want) || directive != noFileComp {
			t.Errorf("%q: got %q %d, want %q", tc.args, got, directive, tc.want)
		}
	}
}

func TestUsageValues(t *testing.T) {
	for usage, want := range map[string][]string{
		"Specify output format (json|tabular|yaml)": {"json", "tabular", "yaml"},
		"Specify output format (constraints|json)":  {"constraints", "json"},
		"Output format (default: tabular)":          nil,
		"":                                          nil,
	} {
		if got := usageValues(usage); !slices.Equal(got, want) {
			t.Errorf("usageValues(%q) = %q, want %q", usage, got, want)
		}
	}
}

// memberSource is a source that also lists members, by controller, recording the deadline.
type memberSource struct {
	*fakeSource
	members map[string][]string
	asked   []string
}

func (m *memberSource) ControllerMembers(ctx context.Context, controller string) ([]string, error) {
	m.asked = append(m.asked, controller)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > Timeout {
		return nil, errors.New("no deadline within completion's")
	}
	ids, ok := m.members[controller]
	if !ok {
		return nil, errors.New("cannot connect")
	}
	return ids, nil
}

// remove-controller-member completes the member ids of the controller of the command line.
func TestCompleteControllerMembers(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  []string
		asked []string
	}{
		{[]string{"remove-controller-member", ""}, []string{"0", "1", "12"}, []string{"test"}},
		{[]string{"remove-controller-member", "1"}, []string{"1", "12"}, []string{"test"}},
		{[]string{"remove-controller-member", "-c", "dead", ""}, nil, []string{"dead"}},
		{[]string{"remove-controller-member", "1", ""}, nil, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			src := &memberSource{fakeSource: liveSource(), members: map[string][]string{"test": {"0", "1", "12"}}}
			got, directive := complete(t, testTree(src), tc.args...)
			if !slices.Equal(got, tc.want) || directive != noFileComp {
				t.Errorf("got %q %d, want %q", got, directive, tc.want)
			}
			if !slices.Equal(src.asked, tc.asked) {
				t.Errorf("asked %q, want %q", src.asked, tc.asked)
			}
		})
	}
}
