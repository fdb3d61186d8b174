package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/core/base"
)

// File is one bundle file to read: Name as the user gave it (errors say it), Dir the directory
// its relative paths are resolved against, Data its content.
type File struct {
	Name string
	Dir  string
	Data []byte
}

// MaxFileSize bounds a bundle file: bundles are small, and a huge one would only exhaust
// memory.
const MaxFileSize = 4 << 20

// ReadFiles parses every YAML document of the files in order: the first document of the first
// file is the base bundle, every other document (after "---", or in a later file: --overlay)
// an overlay. Unknown keys, values of the wrong type and unsupported features (containers,
// storage, offers) are refused, every one with its file and line.
func ReadFiles(files ...File) ([]*Bundle, error) {
	var (
		docs []*Bundle
		c    collector
	)
	for _, f := range files {
		if len(f.Data) > MaxFileSize {
			c.add(Pos{File: f.Name, doc: len(docs)}, "", "bundle file of %d bytes is larger than the limit of %d bytes", len(f.Data), MaxFileSize)
			continue
		}
		dec := yaml.NewDecoder(bytes.NewReader(f.Data))
		empty := true
		for {
			var root yaml.Node
			err := dec.Decode(&root)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				c.errs = append(c.errs, syntaxError(f, len(docs), err))
				break
			}
			empty = false
			p := &reader{file: f, doc: len(docs), c: &c}
			docs = append(docs, p.bundle(&root))
		}
		if empty && len(c.errs) == 0 {
			c.add(Pos{File: f.Name, Line: 1, doc: len(docs)}, "", "bundle is empty")
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return docs, nil
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a YAML parser error into one naming the file and line.
func syntaxError(f File, doc int, err error) *Error {
	msg := err.Error()
	pos := Pos{File: f.Name, Dir: f.Dir, doc: doc}
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &Error{Pos: pos, Msg: "invalid YAML: " + msg}
}

// reader turns one document's nodes into a Bundle, collecting what is wrong.
type reader struct {
	file File
	doc  int
	c    *collector
}

func (r *reader) pos(n *yaml.Node) Pos {
	return Pos{File: r.file.Name, Dir: r.file.Dir, Line: n.Line, doc: r.doc}
}

func (r *reader) errorf(n *yaml.Node, key, format string, args ...any) {
	r.c.add(r.pos(n), key, format, args...)
}

// kv is one entry of a mapping.
type kv struct {
	key   string
	k, v  *yaml.Node
	field string // the path to the value: parent.key
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping returns the entries of a mapping node (null is an empty mapping), refusing
// duplicate keys and keys that are not scalars.
func (r *reader) mapping(n *yaml.Node, path string) ([]kv, bool) {
	n = deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		r.errorf(n, path, "expected a mapping, got %s", describe(n))
		return nil, false
	}
	var out []kv
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			r.errorf(k, path, "expected a name as key, got %s", describe(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			r.errorf(k, path, "key %q is repeated (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, kv{key: k.Value, k: k, v: v, field: join(path, k.Value)})
	}
	return out, true
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

func (r *reader) unknown(e kv, parent string) {
	r.errorf(e.k, parent, "unknown key %q", e.key)
}

func (r *reader) str(e kv) Field[string] {
	f := Field[string]{Pos: r.pos(e.k), Set: true}
	if isNull(e.v) {
		f.Null = true
		return f
	}
	if e.v.Kind != yaml.ScalarNode {
		r.errorf(e.v, e.field, "expected a string, got %s", describe(e.v))
		return f
	}
	f.Value = e.v.Value
	return f
}

func (r *reader) integer(e kv) Field[int] {
	f := Field[int]{Pos: r.pos(e.k), Set: true}
	if isNull(e.v) {
		f.Null = true
		return f
	}
	if e.v.Kind == yaml.ScalarNode && e.v.ShortTag() == "!!int" {
		if n, err := strconv.Atoi(e.v.Value); err == nil {
			f.Value = n
			return f
		}
	}
	r.errorf(e.v, e.field, "expected an integer, got %s", describe(e.v))
	return f
}

func (r *reader) boolean(e kv) Field[bool] {
	f := Field[bool]{Pos: r.pos(e.k), Set: true}
	if isNull(e.v) {
		f.Null = true
		return f
	}
	if e.v.Kind == yaml.ScalarNode && e.v.ShortTag() == "!!bool" {
		var b bool
		if err := e.v.Decode(&b); err == nil {
			f.Value = b
			return f
		}
	}
	r.errorf(e.v, e.field, "expected true or false, got %s", describe(e.v))
	return f
}

// strList reads a list of strings; a single string is a list of one.
func (r *reader) strList(e kv) Field[[]Field[string]] {
	f := Field[[]Field[string]]{Pos: r.pos(e.k), Set: true}
	switch {
	case isNull(e.v):
		f.Null = true
	case e.v.Kind == yaml.ScalarNode:
		f.Value = []Field[string]{{Value: e.v.Value, Pos: r.pos(e.v), Set: true}}
	case e.v.Kind == yaml.SequenceNode:
		for i, item := range e.v.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || isNull(item) {
				r.errorf(item, fmt.Sprintf("%s[%d]", e.field, i), "expected a string, got %s", describe(item))
				continue
			}
			f.Value = append(f.Value, Field[string]{Value: item.Value, Pos: r.pos(item), Set: true})
		}
	default:
		r.errorf(e.v, e.field, "expected a list, got %s", describe(e.v))
	}
	return f
}

func plainStrings(fs []Field[string]) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Value
	}
	return out
}

// strMap reads a mapping of strings (annotations, resources, bindings). Scalars of other types
// are taken as written ("1" for 1), as Juju's YAML reader does for map[string]string.
func (r *reader) strMap(e kv) Field[map[string]Field[string]] {
	f := Field[map[string]Field[string]]{Pos: r.pos(e.k), Set: true}
	entries, ok := r.mapping(e.v, e.field)
	if !ok {
		return f
	}
	if isNull(e.v) {
		f.Null = true
	}
	f.Value = map[string]Field[string]{}
	for _, x := range entries {
		v := Field[string]{Pos: r.pos(x.k), Set: true}
		switch {
		case isNull(x.v):
			v.Null = true
		case x.v.Kind == yaml.ScalarNode:
			v.Value = x.v.Value
		default:
			r.errorf(x.v, x.field, "expected a string, got %s", describe(x.v))
			continue
		}
		f.Value[x.key] = v
	}
	return f
}

// scalar reads an option value as typed in YAML: string, int64, float64 or bool.
func (r *reader) scalar(e kv) (Field[any], bool) {
	f := Field[any]{Pos: r.pos(e.k), Set: true}
	if isNull(e.v) {
		f.Null = true
		return f, true
	}
	if e.v.Kind != yaml.ScalarNode {
		r.errorf(e.v, e.field, "expected a string, number or boolean, got %s", describe(e.v))
		return f, false
	}
	switch e.v.ShortTag() {
	case "!!int":
		var n int64
		if err := e.v.Decode(&n); err != nil {
			r.errorf(e.v, e.field, "integer %s out of range", e.v.Value)
			return f, false
		}
		f.Value = n
	case "!!float":
		var x float64
		if err := e.v.Decode(&x); err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			r.errorf(e.v, e.field, "expected a finite number, got %s", describe(e.v))
			return f, false
		}
		f.Value = x
	case "!!bool":
		var b bool
		_ = e.v.Decode(&b)
		f.Value = b
	default:
		f.Value = e.v.Value
	}
	return f, true
}

// bundle reads one document.
func (r *reader) bundle(root *yaml.Node) *Bundle {
	b := &Bundle{Pos: Pos{File: r.file.Name, Dir: r.file.Dir, Line: 1, doc: r.doc}}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	b.Pos.Line = max(n.Line, 1)
	entries, ok := r.mapping(n, "")
	if !ok {
		return b
	}
	var apps *kv
	for _, e := range entries {
		switch e.key {
		case "bundle":
			b.Type = r.str(e)
		case "name":
			b.Name = r.str(e)
		case "description":
			b.Description = r.str(e)
		case "tags":
			tags := r.strList(e)
			b.Tags = Field[[]string]{Value: plainStrings(tags.Value), Pos: tags.Pos, Set: true}
		case "default-base":
			b.DefaultBase = r.str(e)
		case "series":
			b.Series = r.str(e)
		case "applications", "services":
			if apps != nil {
				r.errorf(e.k, "", "%q and %q cannot both be given (services is the old name of applications)", apps.key, e.key)
				continue
			}
			apps = &e
		case "machines":
			b.Machines = r.machines(e)
		case "relations":
			b.Relations = r.relations(e)
		case "saas":
			r.errorf(e.k, "saas", "cross-model relations are not supported: there are no offers to consume on this controller")
		default:
			r.unknown(e, "")
		}
	}
	if apps != nil {
		b.ApplicationsPos = r.pos(apps.k)
		b.Applications = r.applications(*apps)
	}
	return b
}

func (r *reader) applications(e kv) map[string]*Application {
	entries, _ := r.mapping(e.v, "applications")
	out := map[string]*Application{}
	for _, x := range entries {
		app := &Application{Name: x.key, Pos: r.pos(x.k)}
		out[x.key] = app
		if isNull(x.v) {
			app.Removed = true
			continue
		}
		fields, ok := r.mapping(x.v, x.field)
		if !ok {
			continue
		}
		for _, f := range fields {
			r.applicationField(app, f, x.field)
		}
	}
	return out
}

func (r *reader) applicationField(app *Application, f kv, path string) {
	switch f.key {
	case "charm":
		app.Charm = r.str(f)
	case "channel":
		app.Channel = r.str(f)
	case "revision":
		app.Revision = r.integer(f)
	case "base":
		app.Base = r.str(f)
	case "series":
		app.Series = r.str(f)
	case "num_units", "scale":
		if app.NumUnits.Set {
			r.errorf(f.k, path, "cannot specify both scale and num_units for application %q", app.Name)
			return
		}
		app.NumUnits = r.integer(f)
	case "to":
		app.To = r.strList(f)
	case "placement":
		r.errorf(f.k, f.field, "placement (%s) not valid for non-Kubernetes application %q", f.v.Value, app.Name)
	case "constraints":
		app.Constraints = r.str(f)
	case "options":
		app.Options = r.options(f)
	case "annotations":
		app.Annotations = r.strMap(f)
	case "resources":
		app.Resources = r.strMap(f)
		if v := deref(f.v); v != nil && v.Kind == yaml.MappingNode {
			for i := 1; i < len(v.Content); i += 2 {
				if val := deref(v.Content[i]); val.Kind == yaml.ScalarNode && val.ShortTag() == "!!int" {
					r.errorf(v.Content[i-1], join(f.field, v.Content[i-1].Value),
						"resource revision %s needs a charm store, which there is not: give the path of a file, relative to the bundle", val.Value)
				}
			}
		}
	case "bindings":
		app.Bindings = r.strMap(f)
	case "trust":
		app.Trust = r.boolean(f)
	case "expose":
		app.Expose = r.boolean(f)
	case "exposed-endpoints":
		app.ExposedEndpoints = r.exposedEndpoints(f)
	case "storage":
		r.errorf(f.k, f.field, "storage is not supported: the local provider has no storage pools")
	case "devices":
		r.errorf(f.k, f.field, "devices are not supported: the local provider has no devices")
	case "offers":
		r.errorf(f.k, f.field, "offers are not supported: this controller has no cross-model relations")
	case "plan":
		r.errorf(f.k, f.field, "plans are not supported: there is no charm store")
	default:
		r.unknown(f, path)
	}
}

func (r *reader) options(e kv) Field[map[string]Field[any]] {
	f := Field[map[string]Field[any]]{Pos: r.pos(e.k), Set: true}
	entries, ok := r.mapping(e.v, e.field)
	if !ok {
		return f
	}
	f.Null = isNull(e.v)
	f.Value = map[string]Field[any]{}
	for _, x := range entries {
		if v, ok := r.scalar(x); ok {
			f.Value[x.key] = v
		}
	}
	return f
}

func (r *reader) exposedEndpoints(e kv) Field[map[string]Field[ExposeSpec]] {
	f := Field[map[string]Field[ExposeSpec]]{Pos: r.pos(e.k), Set: true}
	entries, ok := r.mapping(e.v, e.field)
	if !ok {
		return f
	}
	f.Null = isNull(e.v)
	f.Value = map[string]Field[ExposeSpec]{}
	for _, x := range entries {
		spec := Field[ExposeSpec]{Pos: r.pos(x.k), Set: true}
		fields, ok := r.mapping(x.v, x.field)
		if !ok {
			continue
		}
		for _, y := range fields {
			switch y.key {
			case "expose-to-spaces":
				spec.Value.Spaces = plainStrings(r.strList(y).Value)
			case "expose-to-cidrs":
				spec.Value.CIDRs = plainStrings(r.strList(y).Value)
			default:
				r.unknown(y, x.field)
			}
		}
		f.Value[x.key] = spec
	}
	return f
}

func (r *reader) machines(e kv) map[string]*Machine {
	entries, _ := r.mapping(e.v, "machines")
	out := map[string]*Machine{}
	for _, x := range entries {
		m := &Machine{ID: x.key, Pos: r.pos(x.k)}
		out[x.key] = m
		fields, ok := r.mapping(x.v, x.field)
		if !ok {
			continue
		}
		for _, f := range fields {
			switch f.key {
			case "base":
				m.Base = r.str(f)
			case "series":
				m.Series = r.str(f)
			case "constraints":
				m.Constraints = r.str(f)
			case "annotations":
				m.Annotations = r.strMap(f)
			default:
				r.unknown(f, x.field)
			}
		}
	}
	return out
}

func (r *reader) relations(e kv) []*Relation {
	n := e.v
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, "relations", "expected a list of pairs of endpoints, got %s", describe(n))
		return nil
	}
	var out []*Relation
	for i, item := range n.Content {
		item = deref(item)
		key := fmt.Sprintf("relations[%d]", i)
		if item.Kind != yaml.SequenceNode {
			r.errorf(item, key, "expected a pair of endpoints, got %s", describe(item))
			continue
		}
		if len(item.Content) != 2 {
			var eps []string
			for _, c := range item.Content {
				eps = append(eps, deref(c).Value)
			}
			r.errorf(item, key, "relation %q has %d endpoint(s), not 2", eps, len(item.Content))
			continue
		}
		rel := &Relation{Pos: r.pos(item)}
		ok := true
		for j, c := range item.Content {
			c = deref(c)
			if c.Kind != yaml.ScalarNode || isNull(c) {
				r.errorf(c, key, "expected an endpoint (application[:endpoint]), got %s", describe(c))
				ok = false
				continue
			}
			rel.Endpoints[j] = Field[string]{Value: c.Value, Pos: r.pos(c), Set: true}
		}
		if ok {
			out = append(out, rel)
		}
	}
	return out
}

// seriesBase converts a bundle's series ("jammy") to a base as bundles write it ("ubuntu@22.04").
func seriesBase(series string) (string, error) {
	b, err := base.FromSeries(series)
	if err != nil {
		return "", err
	}
	return b.DisplayString(), nil
}
