// Package state keeps each model's machines, applications, units and relations in etcd and
// enforces the lifecycle rules of shared/rules.md in transactions (L-G3: one transaction per
// change, asserting what it read, retried on conflict).
package state

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/names"
)

// State is the controller's view of the store. It is safe for concurrent use.
type State struct {
	kv  *clientv3.Client
	now func() time.Time
	// charmConfigs caches parsed config.yaml by model and charm URL: a stored charm never
	// changes (every upload is a new revision), and unit agents read their config on every
	// wake-up.
	charmConfigs sync.Map
	// charmEndpoints caches each charm's endpoint names likewise, for status.
	charmEndpoints sync.Map
	// keys shares one watch of each model's authorized keys among its machines' agents.
	keys keysWatches
	// shared keeps the last snapshot status read of each model (SharedSnapshot).
	shared sharedSnapshots
}

// New wraps an etcd client.
func New(cli *clientv3.Client) *State {
	return &State{kv: cli, now: time.Now}
}

// SetClock replaces the clock (tests).
func (s *State) SetClock(now func() time.Time) { s.now = now }

// Client is the etcd client, for watchers.
func (s *State) Client() *clientv3.Client { return s.kv }

// Key layout. Everything about one model lives under modelPrefix so one range read is one
// consistent snapshot of it.
const (
	controllerKey   = "/juju/controller"
	modelNamePrefix = "/juju/modelnames/"
	modelsPrefix    = "/juju/models/"
	charmBlobPrefix = "/juju/charmblobs/"
)

// Document kinds, also the kinds of watch events.
const (
	KindModel        = "model"
	KindMachine      = "machine"
	KindApplication  = "application"
	KindUnit         = "unit"
	KindRelation     = "relation"
	KindMachineUnits = "machine-units"
	KindCharm        = "charm"
	// Agents' relation and leadership watches: KindScope and KindSettings take a relation id
	// (every scope record, or every unit's settings, of that relation); KindLeadership and
	// KindLeaderSettings an application name (its lease key, its leader settings).
	KindScope          = "scope"
	KindSettings       = "settings"
	KindLeadership     = "leadership"
	KindLeaderSettings = "leader-settings"
)

// ModelPrefix is the prefix of every key of one model.
func ModelPrefix(uuid string) string { return modelsPrefix + uuid + "/" }

func modelKey(uuid string) string             { return ModelPrefix(uuid) + "model" }
func machineKey(uuid, id string) string       { return ModelPrefix(uuid) + "machines/" + id }
func applicationKey(uuid, name string) string { return ModelPrefix(uuid) + "applications/" + name }
func unitKey(uuid, name string) string        { return ModelPrefix(uuid) + "units/" + name }
func machineUnitsPrefix(uuid, id string) string {
	return ModelPrefix(uuid) + "machineunits/" + id + "/"
}
func machineUnitKey(uuid, id, unit string) string {
	return machineUnitsPrefix(uuid, id) + unit
}
func relationKey(uuid string, id int64) string {
	return ModelPrefix(uuid) + "relations/" + strconv.FormatInt(id, 10)
}
func relationIndexKey(uuid, key string) string { return ModelPrefix(uuid) + "relationkeys/" + key }
func charmKey(uuid, url string) string         { return ModelPrefix(uuid) + "charms/" + url }
func charmBlobKey(uuid, url string) string     { return charmBlobPrefix + uuid + "/" + url }
func sequenceKey(uuid, name string) string     { return ModelPrefix(uuid) + "sequences/" + name }

// KeyPrefix returns what to watch for a kind within a model: one document's key when id is given,
// else the prefix (ending in "/") of every document of that kind.
func KeyPrefix(uuid, kind, id string) (string, error) {
	// An id ending in "/" turns one document's key into a prefix (the hub watches keys ending
	// in "/" as prefixes). Only "<application>/" for units means that on purpose: every unit
	// of the application (wait-for application).
	if strings.HasSuffix(id, "/") && !(kind == KindUnit && names.IsValidApplication(strings.TrimSuffix(id, "/"))) {
		return "", apierr.Errorf(apierr.NotValid, "cannot watch %s %q", kind, id)
	}
	switch kind {
	case KindModel:
		if id != "" {
			return modelKey(uuid), nil
		}
		return ModelPrefix(uuid), nil
	case KindMachine:
		return ModelPrefix(uuid) + "machines/" + id, nil
	case KindApplication:
		return ModelPrefix(uuid) + "applications/" + id, nil
	case KindUnit:
		return ModelPrefix(uuid) + "units/" + id, nil
	case KindRelation:
		return ModelPrefix(uuid) + "relations/" + id, nil
	case KindMachineUnits:
		if id == "" {
			return "", apierr.Errorf(apierr.NotValid, "watching machine units needs a machine id")
		}
		return machineUnitsPrefix(uuid, id), nil
	case KindScope, KindSettings:
		// The prefix ends in "/": relation 1's records are not relation 12's.
		rel, err := strconv.ParseInt(id, 10, 64)
		if err != nil || rel < 0 {
			return "", apierr.Errorf(apierr.NotValid, "watching %s needs a relation id, not %q", kind, id)
		}
		if kind == KindScope {
			return scopePrefix(uuid, rel), nil
		}
		return settingsPrefix(uuid, rel), nil
	case KindLeadership, KindLeaderSettings:
		if !names.IsValidApplication(id) {
			return "", apierr.Errorf(apierr.NotValid, "watching %s needs an application name, not %q", kind, id)
		}
		if kind == KindLeadership {
			return leaseKey(uuid, id), nil
		}
		return leaderSettingsKey(uuid, id), nil
	case KindTask, KindTasks:
		return taskWatchKey(uuid, kind, id)
	}
	return "", apierr.Errorf(apierr.NotValid, "cannot watch %q", kind)
}

// HashPassword is how every credential is kept: only its SHA-256. Passwords are random and long,
// so a slow hash buys nothing.
func HashPassword(password string) string {
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:])
}

// NewPassword returns a random credential.
func NewPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func newUUID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating uuid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

func (s *State) status(value, message string) *storepb.Status {
	return &storepb.Status{Status: value, Message: message, Since: s.now().UnixNano()}
}

// nextSequence takes the next value of a per-model counter inside the caller's transaction; the
// bumped counters are written when the transaction commits.
func (r *reader) nextSequence(ctx context.Context, uuid, name string) (int64, error) {
	key := sequenceKey(uuid, name)
	if n, ok := r.seqs[key]; ok {
		r.seqs[key] = n + 1
		return n, nil
	}
	v, ok, err := r.getRaw(ctx, key)
	if err != nil {
		return 0, err
	}
	var n int64
	if ok {
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, fmt.Errorf("sequence %s: %w", name, err)
		}
	}
	r.seqs[key] = n + 1
	return n, nil
}
