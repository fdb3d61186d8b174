package root

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docs/scripting.md documents the JSON/YAML output of every command that has --format json as
// tables of field paths:
//
//	### `juju status`
//	| field | type | meaning |
//	|---|---|---|
//	| `machines.*` | map of machine id → object | ... |
//	| `machines.*.instance-id` | string | ... |
//	| `machines.*.containers.*` | object, same as `machines.*` | ... |
//
// A path names a field from the top of the document: "." goes into an object, "*" stands for
// every key of a map whose keys are data (machine ids, application names), "[]" for every
// element of a list. "same as `P`" in the type column says the value has the fields documented
// under P, in this section, under "Shared shapes", or under another command's section when
// written "same as `P` of `juju <command>`".
//
// The tests below hold the document to the code: every key of every JSON golden file of a
// command must have its row, every json tag of the CLI's view structs must be documented, and
// every documented name must still be a json tag.

const scriptingDoc = "docs/scripting.md"

// sharedShapes is the key of the "Shared shapes" section, whose rows any section can refer to.
const sharedShapes = "(shared shapes)"

var (
	docCommandHeadingRe = regexp.MustCompile("^###\\s+`juju ([a-z][a-z-]*)")
	docSharedHeadingRe  = regexp.MustCompile(`^###\s+Shared shapes`)
	docRowRe            = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|([^|]*)\\|")
	docAliasRe          = regexp.MustCompile("same as `([^`]+)`(?: of `juju ([a-z][a-z-]*)`)?")
	// A name may hold single spaces: Juju's cancel-task prints "completed at".
	// Names are lower case, except Juju's own Value and Source of model-config's JSON.
	// Names are lower case, except Juju's own Value and Source of model-config's JSON, Active
	// and Total of controllers' JSON, and applicationId and unitID of juju resources'; a path
	// may start at a top-level list ("[]").
	docPathRe = regexp.MustCompile(`^(\[\]|(\*|[a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(\[\])?)(\.(\*|[a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*|Value|Source|Active|Total|applicationId|unitID)(\[\])?)*$`)
)

// docRef is a documented path in a section.
type docRef struct{ section, path string }

// fieldDoc is what docs/scripting.md documents.
type fieldDoc struct {
	// paths holds each section's documented paths.
	paths map[string]map[string]bool
	// aliases maps a documented path to the one whose fields it has.
	aliases map[docRef]docRef
	// order lists the sections in document order.
	order []string
}

func readFieldDoc(t *testing.T) *fieldDoc {
	t.Helper()
	path := filepath.Join(moduleRoot(t), scriptingDoc)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the scripting contract must be documented: %v", err)
	}
	defer f.Close()
	d := &fieldDoc{paths: map[string]map[string]bool{}, aliases: map[docRef]docRef{}}
	type pendingAlias struct {
		from   docRef
		target string
		cmd    string
		line   int
	}
	var pending []pendingAlias
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			switch {
			case docSharedHeadingRe.MatchString(line):
				section = sharedShapes
			case docCommandHeadingRe.MatchString(line):
				section = docCommandHeadingRe.FindStringSubmatch(line)[1]
			default:
				section = ""
			}
			if section != "" {
				if d.paths[section] != nil {
					t.Errorf("%s:%d: a second section for %q", scriptingDoc, n, section)
				}
				d.paths[section] = map[string]bool{}
				d.order = append(d.order, section)
			}
			continue
		}
		m := docRowRe.FindStringSubmatch(line)
		if section == "" || m == nil {
			continue
		}
		p := m[1]
		if !docPathRe.MatchString(p) {
			t.Errorf("%s:%d: %q is not a field path (name.name, * for map keys, [] for list elements)", scriptingDoc, n, p)
			continue
		}
		if d.paths[section][p] {
			t.Errorf("%s:%d: %q documented twice in %s", scriptingDoc, n, p, section)
		}
		d.paths[section][p] = true
		if a := docAliasRe.FindStringSubmatch(m[2]); a != nil {
			pending = append(pending, pendingAlias{from: docRef{section, p}, target: a[1], cmd: a[2], line: n})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, a := range pending {
		var to docRef
		switch {
		case a.cmd != "":
			to = docRef{a.cmd, a.target}
		case d.paths[a.from.section][a.target]:
			to = docRef{a.from.section, a.target}
		default:
			to = docRef{sharedShapes, a.target}
		}
		if !d.paths[to.section][to.path] {
			t.Errorf("%s:%d: %q is the same as %q, which %s does not document", scriptingDoc, a.line, a.from.path, a.target, to.section)
			continue
		}
		d.aliases[a.from] = to
	}
	return d
}

// undocumented walks a JSON value v found at documented path at and returns the paths of the
// keys it holds that the document lacks.
func (d *fieldDoc) undocumented(v any, at docRef, missing map[string]bool) {
	for seen := 0; seen < 10; seen++ {
		to, ok := d.aliases[at]
		if !ok {
			break
		}
		at = to
	}
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	if m, ok := v.(map[any]any); ok { // YAML with keys that are not all strings
		sm := make(map[string]any, len(m))
		for k, e := range m {
			sm[fmt.Sprint(k)] = e
		}
		v = sm
	}
	switch v := v.(type) {
	case map[string]any:
		if star := join(at.path, "*"); d.paths[at.section][star] {
			for _, child := range v {
				d.undocumented(child, docRef{at.section, star}, missing)
			}
			return
		}
		for k, child := range v {
			p := join(at.path, k)
			if !d.paths[at.section][p] {
				missing[at.section+": "+p] = true
				continue
			}
			d.undocumented(child, docRef{at.section, p}, missing)
		}
	case []any:
		for _, e := range v {
			d.undocumented(e, docRef{at.section, at.path + "[]"}, missing)
		}
	}
}

// jsonDocuments decodes every JSON document in data: one, or one per line (JSON lines).
func jsonDocuments(data []byte) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

// TestScriptingDocCoversJSONGoldens renders nothing: it reads each command's JSON and YAML golden
// files (see the naming rule in contract_helpers_test.go) and fails on any key whose path
// docs/scripting.md does not document, so that a new or renamed field shows up in review with
// its documentation.
func TestScriptingDocCoversJSONGoldens(t *testing.T) {
	root := moduleRoot(t)
	doc := readFieldDoc(t)
	commands := map[string]bool{}
	for _, c := range liveCommands(t) {
		commands[c.Name] = true
		if !slices.Contains(c.Formats, "json") {
			continue
		}
		if doc.paths[c.Name] == nil {
			t.Errorf("juju %s takes --format json but %s has no \"### `juju %s`\" section", c.Name, scriptingDoc, c.Name)
			continue
		}
		var jsonFiles int
		for _, f := range goldenFiles(t, root, c.Name) {
			format := goldenFormat(filepath.Base(f))
			if format != "json" && format != "yaml" {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(strings.TrimSpace(string(data))) == 0 {
				continue // nothing on stdout, e.g. whoami without a current controller
			}
			decode, what := jsonDocuments, "JSON"
			if format == "yaml" {
				decode, what = yamlDocuments, "YAML"
			} else {
				jsonFiles++
			}
			docs, err := decode(data)
			if err != nil || len(docs) == 0 {
				t.Errorf("%s: not %s: %v", f, what, err)
				continue
			}
			missing := map[string]bool{}
			for _, v := range docs {
				doc.undocumented(v, docRef{c.Name, ""}, missing)
			}
			for _, p := range slices.Sorted(maps.Keys(missing)) {
				t.Errorf("%s: field %s is not documented in %s", strings.TrimPrefix(f, root+"/"), p, scriptingDoc)
			}
		}
		if jsonFiles == 0 {
			t.Errorf("juju %s takes --format json but has no non-empty JSON golden file to check %s against", c.Name, scriptingDoc)
		}
	}
	for _, s := range doc.order {
		if s != sharedShapes && !commands[s] {
			t.Errorf("%s documents juju %s, which is not a command of the tree", scriptingDoc, s)
		}
	}
}

// yamlDocuments decodes every YAML document in data.
func yamlDocuments(data []byte) ([]any, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

// notOutput are the structs with json tags that the CLI reads rather than prints; their tags
// are not part of the scripting contract.
var notOutput = map[string]string{
	"controller.bootstrapInfo": "jujud's bootstrap.json, read by bootstrap",
}

// outputSources are the directories whose structs render --format json|yaml: the commands and
// the constraints value they print.
var outputSources = []string{"cmd/juju", "core/constraints"}

// jsonTag is one json-tagged struct field found in the sources.
type jsonTag struct {
	name, yaml string
	where      string // pkg.Type.Field at file:line
}

// jsonTags parses the non-test Go files under dirs and returns the json tags of struct fields.
func jsonTags(t *testing.T, root string) []jsonTag {
	t.Helper()
	var tags []jsonTag
	fset := token.NewFileSet()
	for _, dir := range outputSources {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				typeName := file.Name.Name + "." + ts.Name.Name
				if _, skip := notOutput[typeName]; skip {
					return false
				}
				ast.Inspect(ts.Type, func(n ast.Node) bool {
					st, ok := n.(*ast.StructType)
					if !ok {
						return true
					}
					for _, field := range st.Fields.List {
						if field.Tag == nil {
							continue
						}
						raw, err := strconv.Unquote(field.Tag.Value)
						if err != nil {
							continue
						}
						tag := reflect.StructTag(raw)
						name, _, _ := strings.Cut(tag.Get("json"), ",")
						if name == "" || name == "-" {
							continue
						}
						yamlName, _, _ := strings.Cut(tag.Get("yaml"), ",")
						fieldName := "(embedded)"
						if len(field.Names) > 0 {
							fieldName = field.Names[0].Name
						}
						pos := fset.Position(field.Pos())
						rel, _ := filepath.Rel(root, pos.Filename)
						tags = append(tags, jsonTag{name: name, yaml: yamlName,
							where: fmt.Sprintf("%s.%s at %s:%d", typeName, fieldName, rel, pos.Line)})
					}
					return true
				})
				return false
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return tags
}

// jujuYAMLNames are the json names whose yaml name differs, because Juju's does: model-config
// writes Value and Source in JSON (jubilant reads "Value") and value and source in YAML, and
// controllers' controller-machines Active and Total in JSON, active and total in YAML.
var jujuYAMLNames = map[string]string{"Value": "value", "Source": "source", "Active": "active", "Total": "total"}

// TestScriptingDocCoversJSONTags fails when a json tag of a struct the CLI prints is missing
// from docs/scripting.md (omitempty fields may be absent from every golden file, so the golden
// check alone would miss them), when a documented name is no json tag any more, and when a
// field's yaml name differs from its json name (the document describes both formats at once).
func TestScriptingDocCoversJSONTags(t *testing.T) {
	root := moduleRoot(t)
	doc := readFieldDoc(t)
	documented := map[string]bool{}
	for section, paths := range doc.paths {
		for p := range paths {
			segs := strings.Split(p, ".")
			if section == sharedShapes {
				segs = segs[1:] // the shape's name
			}
			for _, seg := range segs {
				seg = strings.TrimSuffix(seg, "[]")
				if seg != "*" && seg != "" {
					documented[seg] = true
				}
			}
		}
	}
	tags := map[string]bool{}
	for _, tag := range jsonTags(t, root) {
		tags[tag.name] = true
		if y, ok := jujuYAMLNames[tag.name]; ok && y == tag.yaml {
			tags[y] = true // documented for the YAML
		}
		if !documented[tag.name] {
			t.Errorf("json field %q (%s) is not documented in %s; document it under its command, "+
				"or list the struct in notOutput if the CLI never prints it", tag.name, tag.where, scriptingDoc)
		}
		if tag.yaml != "" && tag.yaml != tag.name && jujuYAMLNames[tag.name] != tag.yaml {
			t.Errorf("%s: yaml name %q differs from json name %q", tag.where, tag.yaml, tag.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		if !tags[name] {
			t.Errorf("%s documents a field %q that no struct under %v has as a json tag any more", scriptingDoc, name, outputSources)
		}
	}
}
