package bootstrap

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// ModelInfo names a model created at bootstrap.
type ModelInfo struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// Info is bootstrap.json: what `juju bootstrap` needs to record the controller. It holds the
// admin password, so it is 0600 in a 0700 directory.
type Info struct {
	ControllerUUID string      `json:"controller_uuid"`
	APIAddr        string      `json:"api_addr"`
	CACert         string      `json:"ca_cert"`
	AdminTag       string      `json:"admin_tag"`
	AdminPassword  string      `json:"admin_password"`
	PID            int         `json:"pid"`
	Models         []ModelInfo `json:"models"`
}

// WriteInfo writes bootstrap.json atomically.
func WriteInfo(dir string, info Info) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding bootstrap info: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, InfoFile), append(data, '\n'), 0o600)
}

// ReadInfo reads bootstrap.json.
func ReadInfo(dir string) (Info, error) {
	var info Info
	data, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("decoding %s: %w", InfoFile, err)
	}
	return info, nil
}
