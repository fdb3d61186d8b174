package charm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jujuclone/juju/core/base"
)

func bases(t *testing.T, ss ...string) []base.Base {
	t.Helper()
	var out []base.Base
	for _, s := range ss {
		b, err := base.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestReadMeta(t *testing.T) {
	const md = `
name: mysql
summary: a database
description: |
  MySQL.
provides:
  db: mysql
  admin:
    interface: mysql-root
    limit: 3
requires:
  certs:
    interface: tls
    optional: true
  logs:
    interface: syslog
    limit: null
peers:
  cluster: mysql-ha
bases: ["ubuntu@22.04", "ubuntu@24.04/edge"]
extra-bindings: {foo: null}
storage: {data: {type: filesystem}}
`
	m, err := ReadMeta(strings.NewReader(md))
	if err != nil {
		t.Fatal(err)
	}
	want := &Meta{
		Name:        "mysql",
		Summary:     "a database",
		Description: "MySQL.\n",
		Provides: map[string]Relation{
			"db":    {Name: "db", Interface: "mysql", Role: RoleProvider, Scope: ScopeGlobal},
			"admin": {Name: "admin", Interface: "mysql-root", Role: RoleProvider, Scope: ScopeGlobal, Limit: 3},
		},
		Requires: map[string]Relation{
			"certs": {Name: "certs", Interface: "tls", Role: RoleRequirer, Scope: ScopeGlobal, Limit: 1, Optional: true},
			"logs":  {Name: "logs", Interface: "syslog", Role: RoleRequirer, Scope: ScopeGlobal, Limit: 0},
		},
		Peers: map[string]Relation{
			"cluster": {Name: "cluster", Interface: "mysql-ha", Role: RolePeer, Scope: ScopeGlobal, Limit: 1},
		},
		Bases: bases(t, "ubuntu@22.04", "ubuntu@24.04/edge"),
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %#v\nwant %#v", m, want)
	}
}

func TestReadMetaErrors(t *testing.T) {
	tests := []struct {
		name string
		md   string
		err  string
	}{
		{"empty", ``, `charm name missing`},
		{"no name", "summary: x\n", `charm name missing`},
		{"bad yaml", "name: [x\n", `invalid metadata.yaml: yaml: line 1: did not find expected ',' or ']'`},
		{"bad scope", "name: x\nprovides:\n  db:\n    interface: mysql\n    scope: local\n",
			`charm "x" relation "db" has unknown scope "local"`},
		{"no interface", "name: x\nprovides:\n  db:\n    limit: 1\n", `charm "x" relation "db" has no interface`},
		{"null endpoint", "name: x\nprovides:\n  db:\n", `charm "x" relation "db" has no interface`},
		{"negative limit", "name: x\nrequires:\n  db:\n    interface: mysql\n    limit: -1\n",
			`charm "x" relation "db" has negative limit -1`},
		{"bad limit", "name: x\nrequires:\n  db:\n    interface: mysql\n    limit: many\n",
			`charm "x" relation "db" has invalid limit "many"`},
		{"bad base", "name: x\nbases: [ubuntu]\n",
			`invalid metadata.yaml: line 2: expected base string to contain os and channel separated by '@'`},
		{"series and bases", "name: x\nseries: [jammy]\nbases: [ubuntu@22.04]\n", `charm "x" declares both series and systems`},
		{"unknown series", "name: x\nseries: [foo]\n", `charm "x": series "foo" not valid`},
		{"reserved name", "name: x\nprovides:\n  juju-foo: bar\n", `charm "x" using a reserved relation name: "juju-foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadMeta(strings.NewReader(tt.md))
			if err == nil || err.Error() != tt.err {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
		})
	}
}

func TestReadMetaSeries(t *testing.T) {
	tests := []struct {
		md    string
		bases []string
	}{
		{"name: x\nseries: [jammy, focal, jammy]\n", []string{"ubuntu@22.04", "ubuntu@20.04"}},
		{"name: x\nseries: noble\n", []string{"ubuntu@24.04"}},
		{"name: x\n", nil},
	}
	for _, tt := range tests {
		m, err := ReadMeta(strings.NewReader(tt.md))
		if err != nil {
			t.Fatalf("%q: %v", tt.md, err)
		}
		if want := bases(t, tt.bases...); !reflect.DeepEqual(m.Bases, want) {
			t.Errorf("%q: bases %v, want %v", tt.md, m.Bases, want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		md   string
		err  string
	}{
		{"minimal", "name: x\n", ""},
		{"reserved juju", "name: x\nrequires:\n  juju: foo\n", `charm "x" using a reserved relation name: "juju"`},
		{"reserved juju-foo provides", "name: x\nprovides:\n  juju-foo: foo\n", `charm "x" using a reserved relation name: "juju-foo"`},
		{"reserved juju-info provides", "name: x\nprovides:\n  juju-info: juju-info\n", `charm "x" using a reserved relation name: "juju-info"`},
		{"reserved peers", "name: x\npeers:\n  juju-p: foo\n", `charm "x" using a reserved relation name: "juju-p"`},
		{"reserved global requires on subordinate", "name: x\nsubordinate: true\nrequires:\n  juju-info: juju-info\n  host:\n    interface: h\n    scope: container\n",
			`charm "x" using a reserved relation name: "juju-info"`},
		{"reserved container requires on principal", "name: x\nrequires:\n  juju-info:\n    interface: juju-info\n    scope: container\n",
			`charm "x" using a reserved relation name: "juju-info"`},
		{"subordinate may use juju-info", "name: telegraf\nsubordinate: true\nrequires:\n  juju-info:\n    interface: juju-info\n    scope: container\n", ""},
		{"juju- charm may use reserved names", "name: juju-gui\nprovides:\n  juju-foo: juju-info\npeers:\n  juju: juju-x\n", ""},
		{"reserved interface provides", "name: x\nprovides:\n  info: juju-info\n", `charm "x" relation "info" using a reserved interface: "juju-info"`},
		{"reserved interface peers", "name: x\npeers:\n  p: juju\n", `charm "x" relation "p" using a reserved interface: "juju"`},
		{"reserved interface ok on requires", "name: x\nrequires:\n  info: juju-info\n", ""},
		{"duplicate across sections", "name: x\nprovides:\n  db: mysql\nrequires:\n  db: mysql\n", `charm "x" using a duplicated relation name: "db"`},
		{"duplicate with peers", "name: x\nrequires:\n  ha: a\npeers:\n  ha: a\n", `charm "x" using a duplicated relation name: "ha"`},
		{"subordinate without container requires", "name: x\nsubordinate: true\nrequires:\n  host: h\n",
			`subordinate charm "x" lacks "requires" relation with container scope`},
		{"subordinate with container provides only", "name: x\nsubordinate: true\nprovides:\n  host:\n    interface: h\n    scope: container\n",
			`subordinate charm "x" lacks "requires" relation with container scope`},
		{"subordinate ok", "name: x\nsubordinate: true\nrequires:\n  host:\n    interface: h\n    scope: container\n", ""},
		{"invalid relation name", "name: x\nprovides:\n  Bad: foo\n", `charm "x" has invalid relation name "Bad"`},
		{"invalid relation name trailing hyphen", "name: x\nrequires:\n  db-: foo\n", `charm "x" has invalid relation name "db-"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadMeta(strings.NewReader(tt.md))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.err {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
		})
	}
}

func TestCheckHandBuilt(t *testing.T) {
	tests := []struct {
		name string
		m    Meta
		err  string
	}{
		{"empty name", Meta{}, "charm name missing"},
		{"scope defaults to global", Meta{Name: "x", Provides: map[string]Relation{"db": {Interface: "mysql"}}}, ""},
		{"wrong role", Meta{Name: "x", Provides: map[string]Relation{"db": {Interface: "mysql", Role: RoleRequirer}}},
			`charm "x" relation "db" has role "requirer", expected "provider"`},
		{"mismatched name", Meta{Name: "x", Peers: map[string]Relation{"db": {Name: "other", Interface: "mysql"}}},
			`charm "x" relation "db" has mismatched name "other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Check()
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.err {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
		})
	}
}

func TestEndpoints(t *testing.T) {
	const md = `
name: telegraf
subordinate: true
provides:
  prometheus: http
requires:
  juju-info:
    interface: juju-info
    scope: container
  influx: influxdb
peers:
  b-peers: tp
  a-peers: tp
`
	m, err := ReadMeta(strings.NewReader(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []Relation{
		{Name: "a-peers", Interface: "tp", Role: RolePeer, Scope: ScopeGlobal, Limit: 1},
		{Name: "b-peers", Interface: "tp", Role: RolePeer, Scope: ScopeGlobal, Limit: 1},
		{Name: "influx", Interface: "influxdb", Role: RoleRequirer, Scope: ScopeGlobal, Limit: 1},
		{Name: "juju-info", Interface: "juju-info", Role: RoleProvider, Scope: ScopeGlobal},
		{Name: "juju-info", Interface: "juju-info", Role: RoleRequirer, Scope: ScopeContainer, Limit: 1},
		{Name: "prometheus", Interface: "http", Role: RoleProvider, Scope: ScopeGlobal},
	}
	if got := m.Endpoints(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got := m.PeerEndpoints(); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("peers %+v", got)
	}

	// A bare charm still has the implicit juju-info provider.
	bare := &Meta{Name: "x"}
	if got := bare.Endpoints(); len(got) != 1 || got[0].Name != JujuInfo || got[0].Role != RoleProvider {
		t.Fatalf("bare endpoints %+v", got)
	}
	if got := bare.PeerEndpoints(); len(got) != 0 {
		t.Fatalf("bare peers %+v", got)
	}

	// A juju-* charm that provides juju-info itself does not get a second one.
	own := &Meta{Name: "juju-x", Provides: map[string]Relation{"juju-info": {Interface: "juju-info"}}}
	if got := own.Endpoints(); len(got) != 1 {
		t.Fatalf("own endpoints %+v", got)
	}
}

func writeCharm(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadDir(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		bases []string
		err   string
	}{
		{"manifest bases", map[string]string{
			"metadata.yaml": "name: x\n",
			"manifest.yaml": "bases:\n- name: ubuntu\n  channel: \"22.04\"\n  architectures: [amd64]\n- name: ubuntu\n  channel: \"22.04\"\n  architectures: [arm64]\n- name: ubuntu\n  channel: 20.10\n",
		}, []string{"ubuntu@22.04", "ubuntu@20.10"}, ""},
		{"manifest overrides metadata bases", map[string]string{
			"metadata.yaml": "name: x\nbases: [ubuntu@20.04]\n",
			"manifest.yaml": "bases: [{name: ubuntu, channel: '24.04'}]\n",
		}, []string{"ubuntu@24.04"}, ""},
		{"metadata bases", map[string]string{
			"metadata.yaml": "name: x\nbases: [ubuntu@20.04]\n",
		}, []string{"ubuntu@20.04"}, ""},
		{"empty manifest keeps metadata bases", map[string]string{
			"metadata.yaml": "name: x\nbases: [ubuntu@20.04]\n",
			"manifest.yaml": "charmcraft-version: 2\n",
		}, []string{"ubuntu@20.04"}, ""},
		{"series only", map[string]string{
			"metadata.yaml": "name: x\nseries: [focal]\n",
		}, []string{"ubuntu@20.04"}, ""},
		{"v2 charm with series", map[string]string{
			"metadata.yaml": "name: x\nseries: [focal]\n",
			"manifest.yaml": "bases: [{name: ubuntu, channel: '22.04'}]\n",
		}, nil, `charm "x" declares both series and systems`},
		{"bad manifest", map[string]string{
			"metadata.yaml": "name: x\n",
			"manifest.yaml": "bases: [{name: ubuntu}]\n",
		}, nil, `invalid manifest.yaml: line 1: base needs a name and a channel`},
		{"no metadata", map[string]string{"README": "hi"}, nil, "has no metadata.yaml"},
		{"check runs", map[string]string{"metadata.yaml": "name: x\nsubordinate: true\n"}, nil,
			`subordinate charm "x" lacks "requires" relation with container scope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeCharm(t, tt.files)
			m, err := ReadDir(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				if errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("error %v must not look like a missing directory", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if want := bases(t, tt.bases...); !reflect.DeepEqual(m.Bases, want) {
				t.Fatalf("bases %v, want %v", m.Bases, want)
			}
		})
	}
}

func TestReadDirMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := ReadDir(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
	if want := `charm directory "` + missing + `" not found`; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDir(file)
	if err == nil || err.Error() != `"`+file+`" is not a charm directory` || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}
