// Package charm reads and checks charm metadata.
package charm

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/names"
)

// Role is the part an endpoint plays in a relation.
type Role string

const (
	RoleProvider Role = "provider"
	RoleRequirer Role = "requirer"
	RolePeer     Role = "peer"
)

// Scope says which units of the related applications see each other.
type Scope string

const (
	// ScopeGlobal relates every unit to every unit on the other side.
	ScopeGlobal Scope = "global"
	// ScopeContainer relates a principal unit only to its subordinate.
	ScopeContainer Scope = "container"
)

// Relation is one endpoint declared by a charm.
type Relation struct {
	Name      string
	Interface string
	Role      Role
	Scope     Scope
	Limit     int // 0 means no limit
	Optional  bool
}

// Meta is the parsed metadata of a charm.
type Meta struct {
	Name        string
	Summary     string
	Description string
	Subordinate bool
	Provides    map[string]Relation
	Requires    map[string]Relation
	Peers       map[string]Relation
	Bases       []base.Base
	// Resources are the files (and, for Kubernetes models, OCI images) the charm declares
	// (metadata "resources:"); see resource.go.
	Resources map[string]Resource
}

// Resource is one resource a charm declares.
type Resource struct {
	Name        string
	Type        string // "file" or "oci-image"
	Filename    string // where a file resource is put, for "file"
	Description string
}

// Resource types Juju knows.
const (
	ResourceFile     = "file"
	ResourceOCIImage = "oci-image"
)

// JujuInfo is the endpoint and interface every charm provides implicitly.
const JujuInfo = "juju-info"

// rawMeta is metadata.yaml as written.
type rawMeta struct {
	Name        string                 `yaml:"name"`
	Summary     string                 `yaml:"summary"`
	Description string                 `yaml:"description"`
	Subordinate bool                   `yaml:"subordinate"`
	Provides    map[string]rawRelation `yaml:"provides"`
	Requires    map[string]rawRelation `yaml:"requires"`
	Peers       map[string]rawRelation `yaml:"peers"`
	Series      stringList             `yaml:"series"`
	Bases       []rawBase              `yaml:"bases"`
	Resources   map[string]rawResource `yaml:"resources"`
}

type rawResource struct {
	Type        string `yaml:"type"`
	Filename    string `yaml:"filename"`
	Description string `yaml:"description"`
}

// rawRelation accepts both the shorthand "name: interface" and the map
// form.
type rawRelation struct {
	Interface string    `yaml:"interface"`
	Scope     string    `yaml:"scope"`
	Limit     yaml.Node `yaml:"limit"` // kept raw: "limit: null" means no limit
	Optional  bool      `yaml:"optional"`
}

func (r *rawRelation) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&r.Interface)
	}
	type plain rawRelation // avoids recursing into this method
	return n.Decode((*plain)(r))
}

// stringList accepts a single string or a list of strings.
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = stringList{s}
		return nil
	}
	return n.Decode((*[]string)(l))
}

// rawBase accepts "ubuntu@22.04" or {name: ubuntu, channel: "22.04"}.
type rawBase struct {
	base.Base
}

func (b *rawBase) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind == yaml.ScalarNode {
		if err := n.Decode(&s); err != nil {
			return err
		}
	} else {
		var m struct {
			Name    string `yaml:"name"`
			Channel string `yaml:"channel"`
		}
		if err := n.Decode(&m); err != nil {
			return err
		}
		if m.Name == "" || m.Channel == "" {
			return fmt.Errorf("line %d: base needs a name and a channel", n.Line)
		}
		s = m.Name + "@" + m.Channel
	}
	parsed, err := base.Parse(s)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	b.Base = parsed
	return nil
}

// ReadMeta parses and checks metadata.yaml. Bases may be given in it as
// a list of strings ("ubuntu@22.04"); a v1 series list is converted.
func ReadMeta(r io.Reader) (*Meta, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cannot read metadata.yaml: %w", err)
	}
	m, series, err := parseMeta(data)
	if err != nil {
		return nil, err
	}
	if err := m.finish(series); err != nil {
		return nil, err
	}
	return m, nil
}

func parseMeta(data []byte) (*Meta, []string, error) {
	var raw rawMeta
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, nil, fmt.Errorf("invalid metadata.yaml: %v", err)
	}
	m := &Meta{
		Name:        raw.Name,
		Summary:     raw.Summary,
		Description: raw.Description,
		Subordinate: raw.Subordinate,
		Bases:       baseList(raw.Bases),
	}
	var err error
	if m.Provides, err = relations(raw.Name, raw.Provides, RoleProvider, 0); err != nil {
		return nil, nil, err
	}
	// Requirers and peers default to one counterpart, as in Juju.
	if m.Requires, err = relations(raw.Name, raw.Requires, RoleRequirer, 1); err != nil {
		return nil, nil, err
	}
	if m.Peers, err = relations(raw.Name, raw.Peers, RolePeer, 1); err != nil {
		return nil, nil, err
	}
	for name, r := range raw.Resources {
		if m.Resources == nil {
			m.Resources = map[string]Resource{}
		}
		typ := r.Type
		if typ == "" {
			typ = ResourceFile // Juju's default
		}
		m.Resources[name] = Resource{Name: name, Type: typ, Filename: r.Filename, Description: r.Description}
	}
	return m, raw.Series, nil
}

func relations(charm string, raw map[string]rawRelation, role Role, defaultLimit int) (map[string]Relation, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]Relation, len(raw))
	for name, r := range raw {
		rel := Relation{
			Name:      name,
			Interface: r.Interface,
			Role:      role,
			Scope:     Scope(r.Scope),
			Limit:     defaultLimit,
			Optional:  r.Optional,
		}
		if rel.Scope == "" {
			rel.Scope = ScopeGlobal
		}
		switch {
		case r.Limit.Kind == 0:
		case r.Limit.ShortTag() == "!!null":
			rel.Limit = 0
		default:
			if err := r.Limit.Decode(&rel.Limit); err != nil {
				return nil, fmt.Errorf("charm %q relation %q has invalid limit %q", charm, name, r.Limit.Value)
			}
		}
		if rel.Limit < 0 {
			return nil, fmt.Errorf("charm %q relation %q has negative limit %d", charm, name, rel.Limit)
		}
		out[name] = rel
	}
	return out, nil
}

// baseList drops repeated bases (manifests list one per architecture).
func baseList(raw []rawBase) []base.Base {
	var out []base.Base
	for _, b := range raw {
		if !slices.Contains(out, b.Base) {
			out = append(out, b.Base)
		}
	}
	return out
}

// finish converts a v1 series list to bases and checks the result.
func (m *Meta) finish(series []string) error {
	if len(series) > 0 {
		if len(m.Bases) > 0 {
			return fmt.Errorf("charm %q declares both series and systems", m.Name)
		}
		for _, s := range series {
			b, err := base.FromSeries(s)
			if err != nil {
				return fmt.Errorf("charm %q: %v", m.Name, err)
			}
			if !slices.Contains(m.Bases, b) {
				m.Bases = append(m.Bases, b)
			}
		}
	}
	return m.Check()
}

// Check verifies the metadata's consistency.
func (m *Meta) Check() error {
	if m.Name == "" {
		return errors.New("charm name missing")
	}
	seen := map[string]bool{}
	hasContainerRequires := false
	for _, section := range []struct {
		role Role
		rels map[string]Relation
	}{
		{RoleProvider, m.Provides},
		{RoleRequirer, m.Requires},
		{RolePeer, m.Peers},
	} {
		for _, name := range sortedKeys(section.rels) {
			rel := section.rels[name]
			if !names.IsValidEndpoint(name) {
				return fmt.Errorf("charm %q has invalid relation name %q", m.Name, name)
			}
			if rel.Name != "" && rel.Name != name {
				return fmt.Errorf("charm %q relation %q has mismatched name %q", m.Name, name, rel.Name)
			}
			if rel.Role != "" && rel.Role != section.role {
				return fmt.Errorf("charm %q relation %q has role %q, expected %q", m.Name, name, rel.Role, section.role)
			}
			if rel.Interface == "" {
				return fmt.Errorf("charm %q relation %q has no interface", m.Name, name)
			}
			if rel.Scope != "" && rel.Scope != ScopeGlobal && rel.Scope != ScopeContainer {
				return fmt.Errorf("charm %q relation %q has unknown scope %q", m.Name, name, rel.Scope)
			}
			// A subordinate's container-scoped requires may use juju-*
			// names: that is how it attaches to juju-info.
			subordinateAttach := m.Subordinate && section.role == RoleRequirer && rel.Scope == ScopeContainer
			if !subordinateAttach && m.reserved(name) {
				return fmt.Errorf("charm %q using a reserved relation name: %q", m.Name, name)
			}
			if section.role != RoleRequirer && m.reserved(rel.Interface) {
				return fmt.Errorf("charm %q relation %q using a reserved interface: %q", m.Name, name, rel.Interface)
			}
			if seen[name] {
				return fmt.Errorf("charm %q using a duplicated relation name: %q", m.Name, name)
			}
			seen[name] = true
			if section.role == RoleRequirer && rel.Scope == ScopeContainer {
				hasContainerRequires = true
			}
		}
	}
	for _, name := range sortedNames(m.Resources) {
		r := m.Resources[name]
		r.Name = name
		if err := r.check(m.Name); err != nil {
			return err
		}
	}
	if m.Subordinate && !hasContainerRequires {
		return fmt.Errorf("subordinate charm %q lacks \"requires\" relation with container scope", m.Name)
	}
	return nil
}

// reserved reports whether s is in the juju namespace, which only charms
// named juju-* may use.
func (m *Meta) reserved(s string) bool {
	if strings.HasPrefix(m.Name, "juju-") {
		return false
	}
	return s == "juju" || strings.HasPrefix(s, "juju-")
}

// Endpoints returns every endpoint of the charm with its role, including
// the implicit juju-info provider, sorted by name then role.
func (m *Meta) Endpoints() []Relation {
	var eps []Relation
	eps = appendRelations(eps, m.Provides, RoleProvider)
	eps = appendRelations(eps, m.Requires, RoleRequirer)
	eps = appendRelations(eps, m.Peers, RolePeer)
	if _, ok := m.Provides[JujuInfo]; !ok {
		eps = append(eps, Relation{
			Name:      JujuInfo,
			Interface: JujuInfo,
			Role:      RoleProvider,
			Scope:     ScopeGlobal,
		})
	}
	sortRelations(eps)
	return eps
}

// PeerEndpoints returns the peer endpoints sorted by name; each gets a
// peer relation when the application is deployed (L-D2).
func (m *Meta) PeerEndpoints() []Relation {
	eps := appendRelations(nil, m.Peers, RolePeer)
	sortRelations(eps)
	return eps
}

func appendRelations(eps []Relation, rels map[string]Relation, role Role) []Relation {
	for name, rel := range rels {
		rel.Name = name
		rel.Role = role
		if rel.Scope == "" {
			rel.Scope = ScopeGlobal
		}
		eps = append(eps, rel)
	}
	return eps
}

var roleOrder = map[Role]int{RoleProvider: 0, RoleRequirer: 1, RolePeer: 2}

func sortRelations(eps []Relation) {
	slices.SortFunc(eps, func(a, b Relation) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return roleOrder[a.Role] - roleOrder[b.Role]
	})
}

func sortedKeys(m map[string]Relation) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
