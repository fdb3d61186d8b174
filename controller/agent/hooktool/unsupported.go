package hooktool

import "fmt"

// unsupportedTools are Juju hook tools this controller does not answer, and why. They are
// installed like the others so that a hook calling one gets one clear error (exit 1) rather
// than "command not found"; --help says the same.
var unsupportedTools = map[string]string{
	"storage-list":    "the local provider has no storage",
	"storage-get":     "the local provider has no storage",
	"storage-add":     "the local provider has no storage",
	"juju-reboot":     "the local provider cannot reboot a unit's machine",
	"add-metric":      "charm metrics are not collected",
	"pod-spec-set":    "there are no Kubernetes models",
	"k8s-spec-set":    "there are no Kubernetes models",
	"secret-add":      "secrets are not supported",
	"secret-get":      "secrets are not supported",
	"secret-set":      "secrets are not supported",
	"secret-remove":   "secrets are not supported",
	"secret-grant":    "secrets are not supported",
	"secret-revoke":   "secrets are not supported",
	"secret-ids":      "secrets are not supported",
	"secret-info-get": "secrets are not supported",
}

// unsupported answers --help and refuses anything else, whatever the flags.
func unsupported(name, why string) func(t *invocation) error {
	return func(t *invocation) error {
		for _, a := range t.args {
			if a == "--" {
				break
			}
			if a == "-h" || a == "--help" {
				return errHelp
			}
		}
		return fmt.Errorf("%s is not supported by this controller (%s)", name, why)
	}
}
