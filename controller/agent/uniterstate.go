package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// uniterFile keeps what a unit agent remembers between hooks and across restarts: which hooks
// have run and which counterparts each relation's hooks have seen. Scope membership itself is
// the store's record (L-R6); this file only says which hooks are owed.
const uniterFile = "uniter.json"

// uniterState is the unit agent's local record.
type uniterState struct {
	Installed     bool   `json:"installed,omitempty"`
	LeaderElected bool   `json:"leader-elected,omitempty"`
	ConfigHash    string `json:"config-hash,omitempty"`
	Started       bool   `json:"started,omitempty"`
	Stopped       bool   `json:"stopped,omitempty"`
	Removed       bool   `json:"removed,omitempty"`
	// Trust is the application's trust (juju trust) the last config-changed saw. Records older
	// than it say false: a trusted application's units then run config-changed once more.
	Trust bool `json:"trust,omitempty"`
	// LeaderSettings is the leader settings revision the last leader-settings-changed saw.
	LeaderSettings int64 `json:"leader-settings,omitempty"`
	// CharmStatus: the charm has set its workload status (status-set) at least once, so the
	// agent no longer sets it after start.
	CharmStatus bool `json:"charm-status,omitempty"`
	// Relations the unit has joined, by id.
	Relations map[int64]*relationState `json:"relations,omitempty"`
	// Failed is the hook that failed and waits for `juju resolved` (L-U2).
	Failed *hookSpec `json:"failed,omitempty"`
	// Before is the workload status the failure replaced, restored when it is resolved.
	BeforeStatus  string `json:"before-status,omitempty"`
	BeforeMessage string `json:"before-message,omitempty"`
	// CharmURL is the charm in the unit's charm directory: set at deploy from the unit's
	// charm_url, then by each upgrade (juju refresh). "" in records older than upgrades: the
	// unit's charm_url in the store says then.
	CharmURL string `json:"charm-url,omitempty"`
	// UpgradeCharm: the charm was upgraded and its upgrade-charm hook is owed.
	UpgradeCharm bool `json:"upgrade-charm,omitempty"`
	// CharmModifiedVersion is the application's charm_modified_version the charm in place
	// was installed or upgraded for: upgrade-charm runs again when the application's grows,
	// even for the same charm (a resource attached).
	CharmModifiedVersion int64 `json:"charm-modified-version,omitempty"`
}

// relationState is one joined relation: the counterparts whose joined hook ran, with the
// settings revision their last changed hook saw (0: joined, changed not yet run).
type relationState struct {
	Endpoint       string           `json:"endpoint"`
	RemoteApp      string           `json:"remote-application"`
	RemoteEndpoint string           `json:"remote-endpoint"`
	Members        map[string]int64 `json:"members,omitempty"`
	// Broken: departed ran for every counterpart and broken ran; leaving the scope is next.
	Broken bool `json:"broken,omitempty"`
	// Created: relation-created ran. AppSettings is the revision of the other application's
	// data the last relation-changed without a remote unit saw.
	Created     bool  `json:"created,omitempty"`
	AppSettings int64 `json:"app-settings,omitempty"`
}

func readUniterState(dir string) (*uniterState, error) {
	st := &uniterState{}
	data, err := atomicfile.Read(filepath.Join(dir, uniterFile))
	if errors.Is(err, os.ErrNotExist) || err == nil && len(data) == 0 {
		// None yet, or an unsynced first write a crash emptied (writeUnsynced).
		st.Relations = map[int64]*relationState{}
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading uniter state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", filepath.Join(dir, uniterFile), err)
	}
	if st.Relations == nil {
		st.Relations = map[int64]*relationState{}
	}
	for _, r := range st.Relations {
		if r.Members == nil {
			r.Members = map[string]int64{}
		}
	}
	return st, nil
}

// readUnitRecord reads a unit's record; a new unit's starts with the charm its deployer
// unpacked (conf.Charm).
func readUnitRecord(dir string, conf Conf) (*uniterState, error) {
	st, err := readUniterState(dir)
	if err != nil {
		return nil, err
	}
	if st.CharmURL == "" {
		st.CharmURL = conf.Charm
	}
	return st, nil
}

func (st *uniterState) write(dir string) error { return st.writeWith(dir, atomicfile.Write) }

// writeUnsynced is write for what may be lost: a crash leaves the record as it was, or (the
// record's first write, on some file systems) empty, which reads as nothing recorded.
func (st *uniterState) writeUnsynced(dir string) error {
	return st.writeWith(dir, atomicfile.WriteUnsynced)
}

func (st *uniterState) writeWith(dir string, write func(string, []byte, os.FileMode) error) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encoding uniter state: %w", err)
	}
	return write(filepath.Join(dir, uniterFile), data, 0o600)
}
