package hooktool

import "fmt"

// CloudSpec is what credential-get prints: Juju's cloud spec. The JSON keys are Juju's (ops's
// CloudSpec.from_dict reads them). The YAML keys (smart and yaml formats) are Juju's too: its
// cloud spec has no YAML names, so its YAML shows every field under its Go name in lower case.
type CloudSpec struct {
	Type              string           `json:"type" yaml:"type"`
	Name              string           `json:"name" yaml:"name"`
	Region            string           `json:"region,omitempty" yaml:"region"`
	Endpoint          string           `json:"endpoint,omitempty" yaml:"endpoint"`
	IdentityEndpoint  string           `json:"identity-endpoint,omitempty" yaml:"identityendpoint"`
	StorageEndpoint   string           `json:"storage-endpoint,omitempty" yaml:"storageendpoint"`
	Credential        *CloudCredential `json:"credential,omitempty" yaml:"credential"`
	CACertificates    []string         `json:"cacertificates,omitempty" yaml:"cacertificates"`
	SkipTLSVerify     bool             `json:"skip-tls-verify,omitempty" yaml:"skiptlsverify"`
	IsControllerCloud bool             `json:"is-controller-cloud,omitempty" yaml:"iscontrollercloud"`
}

// CloudCredential is the credential of a cloud spec: its auth type and attributes, secret
// ones named in Redacted rather than given.
type CloudCredential struct {
	AuthType   string            `json:"auth-type" yaml:"authtype"`
	Attributes map[string]string `json:"attrs,omitempty" yaml:"attributes"`
	Redacted   []string          `json:"redacted,omitempty" yaml:"redacted"`
}

// credentialGet prints the cloud spec of the unit's model. The controller answers only for a
// trusted application (juju trust); otherwise the Context's error is Juju's "permission denied".
func credentialGet(t *invocation) error {
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	spec, err := t.c.CloudSpec(t.ctx)
	if err != nil {
		return fmt.Errorf("cannot access cloud credentials: %w", err)
	}
	return t.write(spec)
}
