package charmpack

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// generated is the YAML charmcraft writes into the charm: metadata.yaml, config.yaml and
// actions.yaml from charmcraft.yaml (or copied from the source when it has them, the older
// layout), and manifest.yaml with the bases of the platform that builds for arch.
func (p *project) generated(arch string) (map[string][]byte, error) {
	out := map[string][]byte{}

	meta := &yaml.Node{Kind: yaml.MappingNode}
	if p.top != nil {
		for i := 0; i+1 < len(p.top.Content); i += 2 {
			k, v := p.top.Content[i], p.top.Content[i+1]
			switch {
			case metadataKeys[k.Value]:
				meta.Content = append(meta.Content, k, v)
			case k.Value == "links" && v.Kind == yaml.MappingNode:
				for j := 0; j+1 < len(v.Content); j += 2 {
					if to, ok := linksKeys[v.Content[j].Value]; ok {
						meta.Content = append(meta.Content, scalarNode(to), v.Content[j+1])
					}
				}
			}
		}
	}
	sections := []struct {
		file, key string
		node      *yaml.Node
	}{
		{"metadata.yaml", "name", meta},
		{"config.yaml", "config", p.get("config")},
		{"actions.yaml", "actions", p.get("actions")},
	}
	for _, s := range sections {
		if s.node != nil && (s.node.Kind != yaml.MappingNode || len(s.node.Content) > 0) {
			data, err := encode(s.node)
			if err != nil {
				return nil, fmt.Errorf("writing %s: %w", s.file, err)
			}
			out[s.file] = data
			continue
		}
		// Nothing in charmcraft.yaml: the source's own file, as charmcraft copies it.
		data, err := os.ReadFile(filepath.Join(p.dir, s.file))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			out[s.file] = data
		}
	}
	if _, ok := out["metadata.yaml"]; !ok {
		return nil, fmt.Errorf("no metadata: charmcraft.yaml has none and there is no metadata.yaml")
	}

	bases, err := p.bases(arch)
	if err != nil {
		return nil, err
	}
	manifest := struct {
		Version   string         `yaml:"charmcraft-version"`
		StartedAt string         `yaml:"charmcraft-started-at"`
		Bases     []manifestBase `yaml:"bases"`
	}{Version, stamp.Format("2006-01-02T15:04:05.000000Z"), bases}
	data, err := encode(manifest)
	if err != nil {
		return nil, fmt.Errorf("writing manifest.yaml: %w", err)
	}
	out["manifest.yaml"] = data
	return out, nil
}

type manifestBase struct {
	Name          string   `yaml:"name"`
	Channel       string   `yaml:"channel"`
	Architectures []string `yaml:"architectures"`
}

// bases reads charmcraft.yaml's base + platforms (charmcraft 3), platforms alone with
// <os>@<channel>:<arch> names, or bases: (charmcraft 2, short or build-on/run-on form), and
// returns the run bases of what builds for arch.
func (p *project) bases(arch string) ([]manifestBase, error) {
	var found []manifestBase
	addBase := func(base, a string) error {
		if a != arch {
			return nil
		}
		osName, channel, ok := strings.Cut(base, "@")
		if !ok || osName == "" || channel == "" {
			return fmt.Errorf("base %q: want <os>@<channel>", base)
		}
		for i := range found {
			if found[i].Name == osName && found[i].Channel == channel {
				return nil
			}
		}
		found = append(found, manifestBase{Name: osName, Channel: channel, Architectures: []string{a}})
		return nil
	}
	// target splits a platform's build-for ("amd64" or "ubuntu@22.04:amd64") against base.
	target := func(base, s string) error {
		if b, a, ok := strings.Cut(s, ":"); ok {
			return addBase(b, a)
		}
		if base == "" {
			return fmt.Errorf("platform %q names no base and charmcraft.yaml has no base", s)
		}
		return addBase(base, s)
	}

	if platforms := p.get("platforms"); platforms != nil {
		if platforms.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("charmcraft.yaml: platforms is not a mapping")
		}
		base := p.scalar("base")
		for i := 0; i+1 < len(platforms.Content); i += 2 {
			name, spec := platforms.Content[i].Value, platforms.Content[i+1]
			var buildFor []string
			if spec.Kind == yaml.MappingNode {
				var s struct {
					BuildFor []string `yaml:"build-for"`
				}
				if err := spec.Decode(&s); err != nil {
					return nil, fmt.Errorf("charmcraft.yaml: platform %q: %v", name, err)
				}
				buildFor = s.BuildFor
			}
			if len(buildFor) == 0 {
				// A platform without build-for is named after what it builds for.
				buildFor = []string{name}
			}
			for _, f := range buildFor {
				if err := target(base, f); err != nil {
					return nil, fmt.Errorf("charmcraft.yaml: %v", err)
				}
			}
		}
	} else if b := p.get("bases"); b != nil {
		type runBase struct {
			Name          string   `yaml:"name"`
			Channel       string   `yaml:"channel"`
			Architectures []string `yaml:"architectures"`
		}
		var items []struct {
			runBase `yaml:",inline"`
			RunOn   []runBase `yaml:"run-on"`
		}
		if err := b.Decode(&items); err != nil {
			return nil, fmt.Errorf("charmcraft.yaml: bases: %v", err)
		}
		for _, it := range items {
			runs := it.RunOn
			if len(runs) == 0 {
				runs = []runBase{it.runBase}
			}
			for _, r := range runs {
				archs := r.Architectures
				if len(archs) == 0 {
					archs = []string{"amd64"}
				}
				for _, a := range archs {
					if err := addBase(r.Name+"@"+r.Channel, a); err != nil {
						return nil, fmt.Errorf("charmcraft.yaml: bases: %v", err)
					}
				}
			}
		}
	} else {
		return nil, fmt.Errorf("charmcraft.yaml has neither platforms nor bases")
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("charmcraft.yaml has no platform that builds for %s", arch)
	}
	return found, nil
}

func scalarNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// encode writes v as YAML indented by two, without the source's comments.
func encode(v any) ([]byte, error) {
	if n, ok := v.(*yaml.Node); ok {
		v = uncommented(n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// uncommented copies a node tree without comments (they belong to charmcraft.yaml).
func uncommented(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = uncommented(k)
	}
	return &c
}
