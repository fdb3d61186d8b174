package charm

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/core/base"
)

// metadataKeys are the keys of charmcraft.yaml that belong to metadata.yaml, as charmcraft
// splits them when it packs a charm. Everything else (type, parts, base, platforms, bases,
// config, actions, charm-libs, ...) is build or run information.
var metadataKeys = []string{
	"name", "display-name", "summary", "description", "subordinate", "provides", "requires",
	"peers", "extra-bindings", "resources", "storage", "devices", "containers", "assumes",
	"terms", "min-juju-version", "maintainers", "docs", "issues", "source", "website",
	"charm-user",
}

// charmcraft is what charmcraft.yaml says that matters to Juju.
type charmcraft struct {
	metadata []byte // the metadata keys alone, as metadata.yaml
	config   []byte // the config: node, as config.yaml; nil without one
	actions  []byte // the actions: node, as actions.yaml; nil without one
	bases    []base.Base
}

// parseCharmcraft reads a unified charmcraft.yaml.
func parseCharmcraft(data []byte) (*charmcraft, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid charmcraft.yaml: %s", yamlErr(err))
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("invalid charmcraft.yaml: empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("invalid charmcraft.yaml: line %d: not a map", root.Line)
	}
	cc := &charmcraft{}
	meta := &yaml.Node{Kind: yaml.MappingNode}
	var baseNode, platforms, bases *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch key := k.Value; {
		case slices.Contains(metadataKeys, key):
			meta.Content = append(meta.Content, k, v)
		case key == "type":
			if v.Value != "charm" {
				return nil, fmt.Errorf("invalid charmcraft.yaml: line %d: type %q is not a charm", v.Line, v.Value)
			}
		case key == "config":
			if v.ShortTag() != "!!null" {
				out, err := yaml.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("invalid charmcraft.yaml: config: %v", err)
				}
				cc.config = out
			}
		case key == "actions":
			if v.ShortTag() != "!!null" {
				if v.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("invalid charmcraft.yaml: line %d: actions is not a map", v.Line)
				}
				out, err := yaml.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("invalid charmcraft.yaml: actions: %v", err)
				}
				cc.actions = out
			}
		case key == "base":
			baseNode = v
		case key == "platforms":
			platforms = v
		case key == "bases":
			bases = v
		}
	}
	var err error
	if cc.bases, err = charmcraftBases(baseNode, platforms, bases); err != nil {
		return nil, fmt.Errorf("invalid charmcraft.yaml: %v", err)
	}
	if len(cc.bases) > 0 {
		// Written into the generated metadata so that the stored metadata.yaml alone gives
		// the bases (ReadMeta).
		list := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, b := range cc.bases {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: b.DisplayString()})
		}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "bases"}, list)
	}
	if cc.metadata, err = yaml.Marshal(meta); err != nil {
		return nil, fmt.Errorf("invalid charmcraft.yaml: %v", err)
	}
	return cc, nil
}

// charmcraftBases reads the bases the way charmcraft does: "base" with "platforms" (new form,
// platforms' names are architectures), "platforms" alone whose names or build-for entries are
// <base>:<arch>, or "bases" (old form) as a list of {name, channel} or {build-on, run-on}.
func charmcraftBases(baseNode, platforms, bases *yaml.Node) ([]base.Base, error) {
	var out []base.Base
	add := func(b base.Base) {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	if bases != nil && baseNode != nil {
		return nil, fmt.Errorf("line %d: base and bases cannot both be given", bases.Line)
	}
	if baseNode != nil {
		var s string
		if err := baseNode.Decode(&s); err != nil {
			return nil, fmt.Errorf("line %d: base is not a string", baseNode.Line)
		}
		b, err := base.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", baseNode.Line, err)
		}
		add(b)
		return out, nil
	}
	if bases != nil {
		if bases.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("line %d: bases is not a list", bases.Line)
		}
		for _, item := range bases.Content {
			var long struct {
				BuildOn []rawBase `yaml:"build-on"`
				RunOn   []rawBase `yaml:"run-on"`
			}
			if err := item.Decode(&long); err != nil {
				return nil, fmt.Errorf("line %d: %s", item.Line, yamlErr(err))
			}
			if long.BuildOn != nil || long.RunOn != nil {
				runOn := long.RunOn
				if runOn == nil {
					runOn = long.BuildOn // charmcraft: run-on defaults to build-on
				}
				for _, b := range runOn {
					add(b.Base)
				}
				continue
			}
			var short rawBase
			if err := item.Decode(&short); err != nil {
				return nil, err
			}
			add(short.Base)
		}
		return out, nil
	}
	if platforms != nil && platforms.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(platforms.Content); i += 2 {
			name, v := platforms.Content[i], platforms.Content[i+1]
			var p struct {
				BuildFor stringList `yaml:"build-for"`
			}
			if v.ShortTag() != "!!null" {
				if err := v.Decode(&p); err != nil {
					return nil, fmt.Errorf("line %d: platform %q: %s", v.Line, name.Value, yamlErr(err))
				}
			}
			targets := []string(p.BuildFor)
			if len(targets) == 0 {
				targets = []string{name.Value}
			}
			for _, t := range targets {
				bs, _, ok := strings.Cut(t, ":")
				if !ok {
					continue // a bare architecture: no base without a top-level base
				}
				b, err := base.Parse(bs)
				if err != nil {
					return nil, fmt.Errorf("line %d: platform %q: %v", name.Line, name.Value, err)
				}
				add(b)
			}
		}
	}
	return out, nil
}
