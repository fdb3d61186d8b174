package cmdutil

import (
	"context"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/client"
)

// QuickCall runs call with a client of the named controller whose connection is made without
// Connect's login check (Dial's Version call), so ctx's deadline alone bounds dial, TLS
// handshake and call: shell completion gives it a fraction of a second. The endpoints are
// tried as Connect tries them, each DialInterval after the previous one or as soon as it
// failed, so a dead or silent first endpoint costs a moment, not the whole deadline; call
// runs once, on the first connection made.
func (f *Factory) QuickCall(ctx context.Context, controller string, call func(context.Context, *client.Client) error) error {
	configs, err := f.endpointConfigs(controller)
	if err != nil {
		return err
	}
	c, err := client.ConnectAny(ctx, configs)
	if err != nil {
		return err
	}
	defer c.Close()
	return call(ctx, c)
}

// CompletionSource is what shell completion reads through the factory: the local client store,
// which needs no network, and the controller through QuickCall.
type CompletionSource struct{ f *Factory }

// CompletionSource returns the factory's source of completion names.
func (f *Factory) CompletionSource() CompletionSource { return CompletionSource{f: f} }

// Controllers lists the controllers of the local client store.
func (s CompletionSource) Controllers() ([]string, error) { return s.f.Store.ControllerNames() }

// StoreModels lists the models the local client store knows of controller.
func (s CompletionSource) StoreModels(controller string) ([]string, error) {
	models, _, err := s.f.Store.AllModels(controller)
	if err != nil {
		return nil, err
	}
	var out []string
	for name := range models {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Target resolves the controller and model a command line means, as running it would: its
// -m/--model and -c/--controller flags, then the environment, then the store.
func (s CompletionSource) Target(flags *pflag.FlagSet) (controller, model string, err error) {
	s.f.BindFlags(flags)
	cfg, err := s.f.Config()
	if err != nil {
		return "", "", err
	}
	return cfg.Controller, cfg.Model, nil
}

// Repository is $JUJU_REPOSITORY, where deploy looks bare charm names up.
func (s CompletionSource) Repository() string { return s.f.v.GetString("repository") }

// Timeout is $JUJU_COMPLETION_TIMEOUT (a Go duration such as 1s), for a controller too far away
// for completion's default; zero when unset or not valid.
func (s CompletionSource) Timeout() time.Duration {
	_ = s.f.v.BindEnv("completion-timeout", "JUJU_COMPLETION_TIMEOUT")
	d, err := time.ParseDuration(s.f.v.GetString("completion-timeout"))
	if err != nil {
		return 0
	}
	return d
}

// ControllerMembers lists the ids of the controller's members, from one ControllerMembers call
// bounded by ctx.
func (s CompletionSource) ControllerMembers(ctx context.Context, controller string) ([]string, error) {
	var ids []string
	err := s.f.QuickCall(ctx, controller, func(ctx context.Context, c *client.Client) error {
		members, _, err := c.ControllerMembers(ctx)
		for _, m := range members {
			ids = append(ids, m.GetId())
		}
		return err
	})
	return ids, err
}

// Names lists the names of one kind starting with prefix, from one CompleteNames call bounded
// by ctx.
func (s CompletionSource) Names(ctx context.Context, controller, model string, kind client.NameKind, prefix string) ([]string, error) {
	var names []string
	err := s.f.QuickCall(ctx, controller, func(ctx context.Context, c *client.Client) error {
		var err error
		names, _, err = c.CompleteNames(ctx, model, kind, prefix, 0)
		return err
	})
	return names, err
}
