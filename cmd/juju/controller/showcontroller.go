package controller

import (
	"context"
	"crypto/sha256"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// controllerInfoAPI is what "juju show-controller" and "juju controllers --refresh" ask a
// controller: its models, its members, and what it said at login (its version).
type controllerInfoAPI interface {
	ListModels(ctx context.Context) ([]*jujupb.Model, error)
	ControllerMembers(ctx context.Context) ([]*jujupb.ControllerMember, string, error)
	LoginVersion() *jujupb.VersionResponse
}

var _ controllerInfoAPI = (*client.Client)(nil)

type showControllerOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	// Connect returns a client of the named controller.
	Connect func(ctx context.Context, controller string) (controllerInfoAPI, error)

	Names        []string
	ShowPassword bool
	Format       output.Format
	Output       string
}

// NewCmdShowController returns "juju show-controller [<name> ...]": what the client store
// knows of controllers, with their models and members as they say now.
func NewCmdShowController(f *cmdutil.Factory, runF func(*showControllerOptions) error) *cobra.Command {
	opts := &showControllerOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Connect: func(ctx context.Context, controller string) (controllerInfoAPI, error) {
			return f.Connect(ctx, controller)
		},
	}
	cmd := &cobra.Command{
		Use:   "show-controller [options] [<controller name> ...]",
		Short: "Shows detailed information of a controller",
		Long: `Shows extended information about a controller(s) as well as related models
and user login details; the current controller without a name.

Each controller is asked for its models and members: "controller-machines" lists the
members by id, with their API address, store (etcd) role, health, the serving member (the
one that answered) and, with more than one member, Juju's ha-status: "ha-enabled" (a
voting member), "ha-pending" (starting, or a learner still catching up) or "down, lost
connection". "degraded" says why the controller takes no writes, when it cannot. What a
controller could not say is listed under "errors". The client store is updated with the
member counts "juju controllers" shows.

The password is shown only with --show-password.`,
		Example: `  juju show-controller
  juju show-controller local other --format json
  juju show-controller --show-password`,
		Annotations: map[string]string{cmdutil.SeeAlso: "controllers, enable-ha, remove-controller-member"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			if runF != nil {
				return runF(opts)
			}
			return showControllerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.ShowPassword, "show-password", false, "Show password for logged in user")
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func showControllerRun(ctx context.Context, opts *showControllerOptions) error {
	names := opts.Names
	if len(names) == 0 {
		cfg, err := opts.Config()
		if err != nil {
			return err
		}
		if cfg.Controller == "" {
			return errors.New("there is no active controller")
		}
		names = []string{cfg.Controller}
	}
	view := map[string]*showControllerItem{}
	for _, name := range names {
		item, err := showOneController(ctx, opts, name)
		if err != nil {
			return err
		}
		view[name] = item
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// showOneController gathers one controller's details; only an unknown controller or one that
// cannot be reached fails the command, as in Juju. What it cannot tell goes under errors.
func showOneController(ctx context.Context, opts *showControllerOptions, name string) (*showControllerItem, error) {
	d, err := opts.Store.ControllerByName(name)
	if err != nil {
		return nil, err
	}
	c, err := opts.Connect(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("opening API connection: %w", err)
	}
	// The login may have refreshed the endpoints.
	if fresh, err := opts.Store.ControllerByName(name); err == nil {
		d = fresh
	}
	item := &showControllerItem{}
	if v := c.LoginVersion().GetVersion(); v != "" {
		d.AgentVersion = v
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		item.Errors = append(item.Errors, fmt.Sprintf("listing models: %v", err))
	} else {
		item.Models = map[string]showControllerModel{}
		cached := map[string]cmdutil.ModelDetails{}
		machines := 0
		for _, m := range models {
			sm := showControllerModel{UUID: m.GetUuid()}
			if n := int(m.GetMachineCount()); n > 0 {
				sm.MachineCount = &n
				machines += n
			}
			item.Models[m.GetName()] = sm
			cached[m.GetName()] = cmdutil.ModelDetails{UUID: m.GetUuid(), Type: modelType(m.GetType())}
		}
		d.MachineCount = &machines
		if err := opts.Store.SetModels(name, cached); err != nil {
			item.Errors = append(item.Errors, err.Error())
		}
	}
	members, degraded, err := c.ControllerMembers(ctx)
	if err != nil {
		item.Errors = append(item.Errors, fmt.Sprintf("listing controller members: %v", err))
	} else {
		item.Members = membersView(members)
		item.Degraded = degraded
		d.ActiveControllerMachineCount, d.ControllerMachineCount = memberCounts(members)
	}
	// Only what the controller said in full is cached, as Juju does.
	if len(item.Errors) == 0 {
		if err := opts.Store.ModifyController(name, func(s *cmdutil.ControllerDetails) bool {
			s.AgentVersion, s.MachineCount = d.AgentVersion, d.MachineCount
			s.ActiveControllerMachineCount, s.ControllerMachineCount = d.ActiveControllerMachineCount, d.ControllerMachineCount
			return true
		}); err != nil {
			item.Errors = append(item.Errors, err.Error())
		}
	}
	item.Details = showControllerDetails{
		UUID:          d.UUID,
		APIEndpoints:  d.APIEndpoints,
		Cloud:         d.Cloud,
		Region:        d.Region,
		AgentVersion:  d.AgentVersion,
		CAFingerprint: caFingerprint(d.CACert),
		CACert:        d.CACert,
	}
	if current, err := opts.Store.CurrentModel(name); err == nil {
		item.CurrentModel = current
	}
	if acct, err := opts.Store.AccountDetails(name); err == nil {
		item.Account = &showControllerAccount{User: acct.User, Access: "superuser"}
		if opts.ShowPassword {
			item.Account.Password = acct.Password
		}
	} else if !errors.Is(err, apierr.NotFound) {
		item.Errors = append(item.Errors, err.Error())
	}
	return item, nil
}

func modelType(t string) string {
	if t == "" {
		return "iaas"
	}
	return t
}

// caFingerprint is the SHA-256 fingerprint of the CA certificate as Juju and
// "openssl x509 -noout -fingerprint -sha256" print it (AB:CD:...); "" when there is none.
func caFingerprint(certPEM string) string {
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil || block.Type != "CERTIFICATE" {
		return ""
	}
	sum := sha256.Sum256(block.Bytes)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// showControllerItem is one controller of "juju show-controller --format json|yaml": Juju's
// shape, with our members in place of controller machines.
type showControllerItem struct {
	Details      showControllerDetails           `json:"details" yaml:"details"`
	Members      map[string]showControllerMember `json:"controller-machines,omitempty" yaml:"controller-machines,omitempty"`
	Models       map[string]showControllerModel  `json:"models,omitempty" yaml:"models,omitempty"`
	CurrentModel string                          `json:"current-model,omitempty" yaml:"current-model,omitempty"`
	Account      *showControllerAccount          `json:"account,omitempty" yaml:"account,omitempty"`
	Degraded     string                          `json:"degraded,omitempty" yaml:"degraded,omitempty"`
	Errors       []string                        `json:"errors,omitempty" yaml:"errors,omitempty"`
}

// showControllerDetails is what the client store knows of the controller. Juju's YAML says
// controller-uuid where its JSON says uuid; ours says uuid in both, as "juju controllers".
type showControllerDetails struct {
	UUID          string   `json:"uuid" yaml:"uuid"`
	APIEndpoints  []string `json:"api-endpoints" yaml:"api-endpoints,flow"`
	Cloud         string   `json:"cloud" yaml:"cloud"`
	Region        string   `json:"region,omitempty" yaml:"region,omitempty"`
	AgentVersion  string   `json:"agent-version,omitempty" yaml:"agent-version,omitempty"`
	CAFingerprint string   `json:"ca-fingerprint,omitempty" yaml:"ca-fingerprint,omitempty"`
	CACert        string   `json:"ca-cert" yaml:"ca-cert"`
}

// showControllerMember is one member of the controller.
type showControllerMember struct {
	APIAddress string `json:"api-address,omitempty" yaml:"api-address,omitempty"`
	HAStatus   string `json:"ha-status,omitempty" yaml:"ha-status,omitempty"`
	StoreRole  string `json:"store-role,omitempty" yaml:"store-role,omitempty"`
	Health     string `json:"health" yaml:"health"`
	Message    string `json:"message,omitempty" yaml:"message,omitempty"`
	Workers    bool   `json:"workers,omitempty" yaml:"workers,omitempty"`
	Serving    bool   `json:"serving,omitempty" yaml:"serving,omitempty"`
	PID        int64  `json:"pid,omitempty" yaml:"pid,omitempty"`
	Version    string `json:"version,omitempty" yaml:"version,omitempty"`
}

type showControllerModel struct {
	UUID         string `json:"uuid" yaml:"uuid"`
	MachineCount *int   `json:"machine-count,omitempty" yaml:"machine-count,omitempty"`
}

type showControllerAccount struct {
	User     string `json:"user" yaml:"user"`
	Access   string `json:"access,omitempty" yaml:"access,omitempty"`
	Password string `json:"password,omitempty" yaml:"password,omitempty"`
}

// membersView keys the members by id; ha-status only means something with more than one, as in
// Juju.
func membersView(members []*jujupb.ControllerMember) map[string]showControllerMember {
	if len(members) == 0 {
		return nil
	}
	view := make(map[string]showControllerMember, len(members))
	for _, m := range members {
		v := showControllerMember{
			APIAddress: m.GetApiAddress(),
			StoreRole:  m.GetStoreRole(),
			Health:     m.GetHealth(),
			Message:    m.GetMessage(),
			Workers:    m.GetWorkers(),
			Serving:    m.GetServing(),
			PID:        m.GetPid(),
			Version:    m.GetVersion(),
		}
		if len(members) > 1 {
			v.HAStatus = haStatus(m)
		}
		view[m.GetId()] = v
	}
	return view
}

// haStatus is Juju's word for a controller machine's part in HA: down, voting (has a vote) or
// still joining (wants one). Without quorum a voting member keeps its vote: health says more.
func haStatus(m *jujupb.ControllerMember) string {
	switch {
	case m.GetHealth() == "down":
		return "down, lost connection"
	case m.GetHealth() == "starting" || m.GetStoreRole() == "learner":
		return "ha-pending"
	}
	return "ha-enabled"
}

// memberCounts are Juju's controller machine counts: every member, and those that are not down
// and have a vote. A controller that reports no members cannot have more than one: it is one.
func memberCounts(members []*jujupb.ControllerMember) (active, total int) {
	if len(members) == 0 {
		return 1, 1
	}
	for _, m := range members {
		total++
		if haStatus(m) == "ha-enabled" {
			active++
		}
	}
	return active, total
}

// memberEndpoints are the members' API addresses, healthy members first (the serving one
// before them), so the next connection starts with a member that answers.
func memberEndpoints(members []*jujupb.ControllerMember) []string {
	rank := func(m *jujupb.ControllerMember) int {
		switch {
		case m.GetHealth() == "healthy" && m.GetServing():
			return 0
		case m.GetHealth() == "healthy":
			return 1
		}
		return 2
	}
	sorted := slices.Clone(members)
	slices.SortStableFunc(sorted, func(a, b *jujupb.ControllerMember) int { return rank(a) - rank(b) })
	var eps []string
	for _, m := range sorted {
		if a := m.GetApiAddress(); a != "" && !slices.Contains(eps, a) {
			eps = append(eps, a)
		}
	}
	return eps
}

// recordMembers writes what the client store keeps of a controller's members: their API
// addresses (api-endpoints) and counts. A removed member's address (gone, when set) is dropped
// even when the members are not known. Nothing changes for a controller without members.
func recordMembers(store *cmdutil.Store, controller string, members []*jujupb.ControllerMember, gone string) error {
	eps := memberEndpoints(members)
	return store.ModifyController(controller, func(d *cmdutil.ControllerDetails) bool {
		changed := false
		if len(eps) > 0 && !slices.Equal(d.APIEndpoints, eps) {
			d.APIEndpoints, changed = eps, true
		}
		if gone != "" && len(d.APIEndpoints) > 1 && slices.Contains(d.APIEndpoints, gone) {
			d.APIEndpoints, changed = slices.DeleteFunc(slices.Clone(d.APIEndpoints), func(a string) bool { return a == gone }), true
		}
		if len(members) > 0 {
			active, total := memberCounts(members)
			if d.ActiveControllerMachineCount != active || d.ControllerMachineCount != total {
				d.ActiveControllerMachineCount, d.ControllerMachineCount, changed = active, total, true
			}
		}
		return changed
	})
}
