package hooktool

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func notLeader(f *fakeContext) { f.leader = false }

// noRemoteUnit is a hook of the whole remote application (relation-created, or -changed for
// application data): the hook has a relation but no remote unit.
func noRemoteUnit(f *fakeContext) { f.remote = "" }

func TestRelationGet(t *testing.T) {
	const u = "[options] [<key>|-] [<unit-or-app>]"
	const mysql0 = "host: 10.0.0.2\nport: \"3306\"\nuser: wp\n"
	runCases(t, []toolCase{
		{name: "relation-get", args: []string{"host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"missing"}, want: ok("")},
		{name: "relation-get", want: ok(mysql0)},
		{name: "relation-get", args: []string{"-"}, want: ok(mysql0)},
		{name: "relation-get", args: []string{"host", "mysql/1"}, want: ok("10.0.0.3\n")},
		{name: "relation-get", args: []string{"-", "wordpress/0"}, want: ok("private-address: 10.0.0.1\n")},
		{name: "relation-get", args: []string{"-r", "db:4", "host", "mysql/7"}, want: ok("10.0.0.9\n")},
		{name: "relation-get", args: []string{"-r", "3", "host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"--relation=db:3", "--format=json"}, want: ok(`{"host":"10.0.0.2","port":"3306","user":"wp"}` + "\n")},
		{name: "relation-get", args: []string{"--format", "json", "user"}, want: ok(`"wp"` + "\n")},
		{name: "relation-get", args: []string{"--format", "json", "missing"}, want: ok("null\n")},
		{name: "relation-get", args: []string{"--format", "yaml", "host"}, want: ok("10.0.0.2\n")},
		{name: "relation-get", args: []string{"--format", "yaml", "missing"}, want: ok("")},
		{name: "relation-get", args: []string{"-", "mysql/9"}, want: ok("{}\n")},
		{name: "relation-get", args: []string{"--format=json", "-", "mysql/9"}, want: ok("{}\n")},
		// Flags after the arguments, as ops passes them.
		{name: "relation-get", args: []string{"host", "mysql/1", "--format=json"}, want: ok(`"10.0.0.3"` + "\n")},
		// Application data: an application name, a unit name standing for its application, or
		// by default the remote application of the hook's relation.
		{name: "relation-get", args: []string{"--app", "-", "mysql"}, want: ok("database: blog\n")},
		{name: "relation-get", args: []string{"--app", "-", "mysql/1"}, want: ok("database: blog\n")},
		{name: "relation-get", args: []string{"--app"}, want: ok("database: blog\n")},
		{name: "relation-get", args: []string{"--app", "database"}, want: ok("blog\n")},
		{name: "relation-get", args: []string{"--app", "database"}, setup: noRemoteUnit, want: ok("blog\n")},
		{name: "relation-get", args: []string{"--app", "-", "wordpress"}, want: ok("tables: posts\n")},
		{name: "relation-get", args: []string{"--app", "-", "wordpress"}, setup: notLeader,
			want: failed("permission denied: only the leader reads its application's settings")},
		// In a hook of the remote application, the default is the application's data.
		{name: "relation-get", args: []string{"database"}, setup: noRemoteUnit, want: ok("blog\n")},
		// The remote unit is the default only in the hook's own relation.
		{name: "relation-get", args: []string{"-r", "db:4", "host"}, want: usage("relation-get", "no unit or application specified", u)},
		{name: "relation-get", args: []string{"-r", "db:3", "host"}, setup: notRelationHook, want: usage("relation-get", "no unit or application specified", u)},
		{name: "relation-get", args: []string{"-r", "3", "--app"}, setup: notRelationHook, want: usage("relation-get", "no unit or application specified", u)},
		{name: "relation-get", setup: notRelationHook, want: usage("relation-get", "no relation id specified", u)},
		{name: "relation-get", args: []string{"-r", "db:x"}, want: usage("relation-get", `invalid relation id "db:x"`, u)},
		{name: "relation-get", args: []string{"-r", ":3"}, want: usage("relation-get", `invalid relation id ":3"`, u)},
		{name: "relation-get", args: []string{"a", "b", "c"}, want: usage("relation-get", `unrecognized args: ["c"]`, u)},
		{name: "relation-get", args: []string{"--format", "xml"}, want: usage("relation-get", `invalid format "xml", expected one of [smart json yaml]`, u)},
		{name: "relation-get", args: []string{"--bogus"}, want: usage("relation-get", "unknown flag: --bogus", u)},
		{name: "relation-get", args: []string{"-r", "db:9", "x", "mysql/0"}, want: usage("relation-get", `invalid value "db:9" for flag -r: relation not found`, u)},
		{name: "relation-get", args: []string{"x"}, setup: func(f *fakeContext) { f.err = errors.New("connection lost") }, want: failed("connection lost")},
	})
}

func TestRelationSet(t *testing.T) {
	const u = "[options] <key>=<value> ..."
	runCases(t, []toolCase{
		{name: "relation-set", args: []string{"a=1", "b=", "c=x=y"}, want: ok(""), record: []string{"relation-set db:3 app=false map[a:1 b: c:x=y]"}},
		{name: "relation-set", args: []string{"-r", "4", "a=1"}, want: ok(""), record: []string{"relation-set 4 app=false map[a:1]"}},
		{name: "relation-set", args: []string{"--file", "-", "b=override"}, stdin: "a: 1\nb: two\nc: null\nd: true\n",
			want: ok(""), record: []string{"relation-set db:3 app=false map[a:1 b:override c: d:true]"}},
		{name: "relation-set", args: []string{"--app", "a=1"}, want: ok(""), record: []string{"relation-set db:3 app=true map[a:1]"}},
		{name: "relation-set", args: []string{"--app", "a=1"}, setup: notLeader, want: failed("this unit is not the leader")},
		{name: "relation-set", args: []string{"--format=json", "a=1"}, want: ok(""), record: []string{"relation-set db:3 app=false map[a:1]"}},
		{name: "relation-set", args: []string{"--file=-"}, stdin: "- a\n", want: failed("reading --file -: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]string")},
		{name: "relation-set", args: []string{"--file=-"}, stdin: "", want: ok(""), record: []string{"relation-set db:3 app=false map[]"}},
		{name: "relation-set", args: []string{"x"}, want: usage("relation-set", `expected "key=value", got "x"`, u)},
		{name: "relation-set", args: []string{"=x"}, want: usage("relation-set", `expected "key=value", got "=x"`, u)},
		{name: "relation-set", args: []string{"a=1"}, setup: notRelationHook, want: usage("relation-set", "no relation id specified", u)},
		{name: "relation-set", args: []string{"-r", "9", "a=1"}, want: usage("relation-set", `invalid value "9" for flag -r: relation not found`, u)},
		// L-R3: the Context refuses writes in -departed and -broken hooks; the tool says why.
		{name: "relation-set", args: []string{"a=1"}, setup: func(f *fakeContext) {
			f.err = errors.New(`cannot write relation settings in the "db-relation-departed" hook: the relation is departing`)
		}, want: failed(`cannot write relation settings in the "db-relation-departed" hook: the relation is departing`)},
	})
}

func TestRelationIDsListAndModel(t *testing.T) {
	runCases(t, []toolCase{
		{name: "relation-ids", want: ok("db:3\ndb:4\n")},
		{name: "relation-ids", args: []string{"cache"}, want: ok("")},
		{name: "relation-ids", args: []string{"--format", "json", "cache"}, want: ok("[]\n")},
		{name: "relation-ids", args: []string{"--format=json"}, want: ok(`["db:3","db:4"]` + "\n")},
		{name: "relation-ids", args: []string{"--format=yaml", "db"}, want: ok("- db:3\n- db:4\n")},
		{name: "relation-ids", setup: notRelationHook, want: usage("relation-ids", "no endpoint specified", "[options] [<endpoint>]")},
		{name: "relation-ids", args: []string{"nope"}, want: failed(`unknown endpoint "nope"`)},
		{name: "relation-list", want: ok("mysql/0\nmysql/1\n")},
		{name: "relation-list", args: []string{"-r", "db:4", "--format", "json"}, want: ok(`["mysql/7"]` + "\n")},
		{name: "relation-list", args: []string{"-r", "12345", "--format", "json"}, want: ok("[]\n")},
		{name: "relation-list", args: []string{"-r", "12345"}, want: ok("")},
		{name: "relation-list", args: []string{"--app"}, want: ok("mysql\n")},
		{name: "relation-list", args: []string{"-r", "0", "--app", "--format=yaml"}, want: ok("wordpress\n")},
		{name: "relation-list", args: []string{"-r", "9"}, want: usage("relation-list", `invalid value "9" for flag -r: relation not found`, "[options]")},
		{name: "relation-list", args: []string{"-r", "9", "--app"}, want: usage("relation-list", `invalid value "9" for flag -r: relation not found`, "[options]")},
		{name: "relation-list", args: []string{"x"}, want: usage("relation-list", `unrecognized args: ["x"]`, "[options]")},
		{name: "relation-list", setup: notRelationHook, want: usage("relation-list", "no relation id specified", "[options]")},
		{name: "relation-model-get", want: ok("uuid: " + testModelUUID + "\n")},
		{name: "relation-model-get", args: []string{"-r", "4", "--format=yaml"}, want: ok("uuid: " + testModelUUID + "\n")},
		{name: "relation-model-get", args: []string{"-r", "9"}, want: usage("relation-model-get", `invalid value "9" for flag -r: relation not found`, "[options]")},
		{name: "relation-model-get", setup: notRelationHook, want: usage("relation-model-get", "no relation id specified", "[options]")},
		{name: "relation-model-get", args: []string{"x"}, want: usage("relation-model-get", `unrecognized args: ["x"]`, "[options]")},
	})
}

func TestStatus(t *testing.T) {
	const u = "[options] <maintenance|blocked|waiting|active> [<message>]"
	runCases(t, []toolCase{
		{name: "status-set", args: []string{"maintenance", "installing software"}, want: ok(""), record: []string{`status-set app=false maintenance "installing software"`}},
		{name: "status-set", args: []string{"--application", "active"}, want: ok(""), record: []string{`status-set app=true active ""`}},
		{name: "status-set", args: []string{"--application=true", "active"}, want: ok(""), record: []string{`status-set app=true active ""`}},
		{name: "status-set", args: []string{"error"}, want: usage("status-set", `invalid status "error", expected one of [maintenance blocked waiting active]`, u)},
		{name: "status-set", want: usage("status-set", "no status specified", u)},
		{name: "status-set", args: []string{"active", "a", "b"}, want: usage("status-set", `unrecognized args: ["b"]`, u)},
		{name: "status-set", args: []string{"--application=maybe", "active"}, want: usage("status-set", `invalid argument "maybe" for "--application" flag: strconv.ParseBool: parsing "maybe": invalid syntax`, u)},
		{name: "status-set", args: []string{"--application", "blocked", "x"}, setup: notLeader, want: failed("this unit is not the leader")},
		{name: "status-get", want: ok("active\n")},
		{name: "status-get", args: []string{"--application"}, want: ok("waiting\n")},
		{name: "status-get", args: []string{"--format", "json"}, want: ok(`{"status":"active"}` + "\n")},
		{name: "status-get", args: []string{"--format=yaml"}, want: ok("status: active\n")},
		{name: "status-get", args: []string{"--include-data"}, want: ok("message: ready\nstatus: active\nstatus-data: {}\n")},
		{name: "status-get", args: []string{"--include-data", "--format=json"}, want: ok(`{"message":"ready","status":"active","status-data":{}}` + "\n")},
		{name: "status-get", args: []string{"--application", "--format=json"}, want: ok(
			`{"application-status":{"status":"waiting","units":{"wordpress/0":{"status":"active"},"wordpress/1":{"status":"maintenance"}}}}` + "\n")},
		{name: "status-get", args: []string{"--application", "--include-data"}, want: ok(`application-status:
  message: for units
  status: waiting
  status-data:
    pending: 1
  units:
    wordpress/0:
      message: ready
      status: active
      status-data: {}
    wordpress/1:
      message: installing
      status: maintenance
      status-data: {}
`)},
		{name: "status-get", args: []string{"--application"}, setup: notLeader, want: failed("finding application status: this unit is not the leader")},
		{name: "status-get", setup: func(f *fakeContext) { f.err = errors.New("connection lost") }, want: failed("finding workload status: connection lost")},
		{name: "status-get", args: []string{"x"}, want: usage("status-get", `unrecognized args: ["x"]`, "[options]")},
		{name: "application-version-set", args: []string{"1.2.3"}, want: ok(""), record: []string{"version 1.2.3"}},
		{name: "application-version-set", args: []string{"--", "-rc1"}, want: ok(""), record: []string{"version -rc1"}},
		{name: "application-version-set", want: usage("application-version-set", "no version specified", "<version>")},
		{name: "application-version-set", args: []string{"1", "2"}, want: usage("application-version-set", `unrecognized args: ["2"]`, "<version>")},
	})
}

func TestJujuLog(t *testing.T) {
	const u = "[options] <message> ..."
	runCases(t, []toolCase{
		{name: "juju-log", args: []string{"hello", "world"}, want: ok(""), record: []string{`log INFO "hello world"`}},
		{name: "juju-log", args: []string{"-l", "warn", "careful"}, want: ok(""), record: []string{`log WARNING "careful"`}},
		{name: "juju-log", args: []string{"--log-level=error", "bad"}, want: ok(""), record: []string{`log ERROR "bad"`}},
		{name: "juju-log", args: []string{"--debug", "details"}, want: ok(""), record: []string{`log DEBUG "details"`}},
		{name: "juju-log", args: []string{"-l", "TRACE", "--", "-x"}, want: ok(""), record: []string{`log TRACE "-x"`}},
		// After "--" everything is the message, a --format too.
		{name: "juju-log", args: []string{"--log-level", "INFO", "--", "--format=json"}, want: ok(""), record: []string{`log INFO "--format=json"`}},
		{name: "juju-log", args: []string{"--format=json", "x"}, want: ok(""), record: []string{`log INFO "x"`}},
		{name: "juju-log", args: []string{"-l", "loud", "x"}, want: usage("juju-log", `invalid log level "loud", expected one of [TRACE DEBUG INFO WARNING ERROR]`, u)},
		{name: "juju-log", want: usage("juju-log", "no message specified", u)},
	})
}

func TestConfigGet(t *testing.T) {
	const u = "[options] [<key>]"
	runCases(t, []toolCase{
		{name: "config-get", args: []string{"name"}, want: ok("blog\n")},
		{name: "config-get", args: []string{"debug"}, want: ok("True\n")}, // as Juju's smart format
		{name: "config-get", args: []string{"port"}, want: ok("8080\n")},
		{name: "config-get", args: []string{"ratio"}, want: ok("0.5\n")},
		{name: "config-get", args: []string{"unset"}, want: ok("")},
		{name: "config-get", args: []string{"nope"}, want: ok("")},
		{name: "config-get", args: []string{"--format=json", "debug"}, want: ok("true\n")},
		{name: "config-get", args: []string{"--format=yaml", "debug"}, want: ok("true\n")},
		{name: "config-get", args: []string{"--format=json", "unset"}, want: ok("null\n")},
		{name: "config-get", want: ok("debug: true\nname: blog\nport: 8080\nratio: 0.5\n")},
		{name: "config-get", args: []string{"-a"}, want: ok("debug: true\nname: blog\nport: 8080\nratio: 0.5\nunset: null\n")},
		{name: "config-get", args: []string{"--format", "json"}, want: ok(`{"debug":true,"name":"blog","port":8080,"ratio":0.5}` + "\n")},
		{name: "config-get", args: []string{"--all", "name"}, want: usage("config-get", `cannot use argument --all together with key "name"`, u)},
		{name: "config-get", args: []string{"a", "b"}, want: usage("config-get", `unrecognized args: ["b"]`, u)},
	})
}

func TestUnitGet(t *testing.T) {
	const u = "[options] private-address|public-address"
	runCases(t, []toolCase{
		{name: "unit-get", args: []string{"private-address"}, want: ok("10.0.0.1\n")},
		{name: "unit-get", args: []string{"public-address"}, want: ok("203.0.113.1\n")},
		{name: "unit-get", args: []string{"--format=json", "public-address"}, want: ok(`"203.0.113.1"` + "\n")},
		{name: "unit-get", args: []string{"public-address", "--format=yaml"}, want: ok("203.0.113.1\n")},
		{name: "unit-get", args: []string{"machine-id"}, want: usage("unit-get", `unknown setting "machine-id"`, u)},
		{name: "unit-get", want: usage("unit-get", "no setting specified", u)},
	})
}

func TestPorts(t *testing.T) {
	const u = "<port>[/<protocol>] | <from>-<to>[/<protocol>] | icmp"
	runCases(t, []toolCase{
		{name: "open-port", args: []string{"80"}, want: ok(""), record: []string{"open 80/tcp"}},
		{name: "open-port", args: []string{"53/UDP"}, want: ok(""), record: []string{"open 53/udp"}},
		{name: "open-port", args: []string{"8000-8005/udp"}, want: ok(""), record: []string{"open 8000-8005/udp"}},
		{name: "open-port", args: []string{"443-443"}, want: ok(""), record: []string{"open 443/tcp"}},
		{name: "open-port", args: []string{"ICMP"}, want: ok(""), record: []string{"open icmp"}},
		{name: "close-port", args: []string{"1-65535/tcp"}, want: ok(""), record: []string{"close 1-65535/tcp"}},
		{name: "open-port", args: []string{"0"}, want: usage("open-port", `invalid port "0", expected a port or range within 1-65535`, u)},
		{name: "open-port", args: []string{"65536"}, want: usage("open-port", `invalid port "65536", expected a port or range within 1-65535`, u)},
		{name: "open-port", args: []string{"80/sctp"}, want: usage("open-port", `invalid protocol "sctp" in "80/sctp", expected tcp or udp`, u)},
		{name: "open-port", args: []string{"icmp/tcp"}, want: usage("open-port", `invalid port "icmp/tcp", expected a port or range within 1-65535`, u)},
		{name: "close-port", args: []string{"90-80"}, want: usage("close-port", `invalid port range "90-80": 90 is greater than 80`, u)},
		{name: "close-port", args: []string{"-"}, want: usage("close-port", `invalid port "-", expected a port or range within 1-65535`, u)},
		{name: "open-port", want: usage("open-port", "no port or range specified", u)},
		{name: "open-port", args: []string{"80", "81"}, want: usage("open-port", `unrecognized args: ["81"]`, u)},
		{name: "opened-ports", want: ok("80/tcp\n8000-8005/udp\nicmp\n")},
		{name: "opened-ports", args: []string{"--format=yaml"}, want: ok("- 80/tcp\n- 8000-8005/udp\n- icmp\n")},
		{name: "opened-ports", args: []string{"--format=json"}, want: ok(`["80/tcp","8000-8005/udp","icmp"]` + "\n")},
		{name: "opened-ports", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.ports = nil }, want: ok("[]\n")},
		{name: "opened-ports", setup: func(f *fakeContext) { f.ports = nil }, want: ok("")},
	})
}

func TestLeadership(t *testing.T) {
	runCases(t, []toolCase{
		{name: "is-leader", want: ok("True\n")},
		{name: "is-leader", setup: notLeader, want: ok("False\n")},
		{name: "is-leader", args: []string{"--format=json"}, want: ok("true\n")},
		{name: "is-leader", args: []string{"--format", "yaml"}, setup: notLeader, want: ok("false\n")},
		{name: "leader-get", want: ok("peer: wordpress/1\nsecret: s3\n")},
		{name: "leader-get", args: []string{"secret"}, want: ok("s3\n")},
		{name: "leader-get", args: []string{"missing"}, want: ok("")},
		{name: "leader-get", args: []string{"--format=json", "-"}, want: ok(`{"peer":"wordpress/1","secret":"s3"}` + "\n")},
		{name: "leader-get", args: []string{"a", "b"}, want: usage("leader-get", `unrecognized args: ["b"]`, "[options] [<key>|-]")},
		{name: "leader-set", args: []string{"a=1", "b="}, want: ok(""), record: []string{"leader-set map[a:1 b:]"}},
		{name: "leader-set", args: []string{"a"}, want: usage("leader-set", `expected "key=value", got "a"`, "<key>=<value> ...")},
		{name: "leader-set", args: []string{"a=1"}, setup: func(f *fakeContext) { f.err = ErrNotLeader }, want: failed("this unit is not the leader")},
	})
}

func TestNetworkGet(t *testing.T) {
	fixedInterfaces(t)
	const u = "[options] <binding>"
	const full = `{"bind-addresses":[{"mac-address":"00:16:3e:aa:bb:cc","interface-name":"eth0","addresses":[{"hostname":"","value":"10.0.0.1","cidr":"10.0.0.0/24","address":"10.0.0.1"}],"macaddress":"00:16:3e:aa:bb:cc","interfacename":"eth0"}],"egress-subnets":["10.0.0.1/32"],"ingress-addresses":["10.0.0.1"]}` + "\n"
	const fullYAML = `bind-addresses:
- mac-address: 00:16:3e:aa:bb:cc
  interface-name: eth0
  addresses:
  - hostname: ""
    value: 10.0.0.1
    cidr: 10.0.0.0/24
    address: 10.0.0.1
  macaddress: 00:16:3e:aa:bb:cc
  interfacename: eth0
egress-subnets:
- 10.0.0.1/32
ingress-addresses:
- 10.0.0.1
`
	runCases(t, []toolCase{
		{name: "network-get", args: []string{"db", "--format=json"}, want: ok(full)},
		{name: "network-get", args: []string{"db", "-r", "3", "--format=json"}, want: ok(full)},
		{name: "network-get", args: []string{"admin-api", "--format=json"}, setup: notRelationHook, want: ok(full)},
		{name: "network-get", args: []string{"juju-info"}, want: ok(fullYAML)},
		{name: "network-get", args: []string{"juju-info", "--format=yaml"}, want: ok(fullYAML)},
		{name: "network-get", args: []string{"db", "--bind-address"}, want: ok("10.0.0.1\n")},
		{name: "network-get", args: []string{"db", "--ingress-address", "--format=json"}, want: ok(`"10.0.0.1"` + "\n")},
		{name: "network-get", args: []string{"db", "--egress-subnets"}, want: ok("10.0.0.1/32\n")},
		{name: "network-get", args: []string{"db", "--egress-subnets", "--format=json"}, want: ok(`["10.0.0.1/32"]` + "\n")},
		{name: "network-get", args: []string{"db", "--bind-address", "--ingress-address", "--egress-subnets", "--format=json"},
			want: ok(`{"bind-address":"10.0.0.1","egress-subnets":["10.0.0.1/32"],"ingress-address":"10.0.0.1"}` + "\n")},
		{name: "network-get", args: []string{"db", "--primary-address"}, want: ok("10.0.0.1\n")},
		{name: "network-get", args: []string{"db", "--primary-address", "--bind-address"}, want: usage("network-get", "--primary-address must be the only flag specified", u)},
		// Outside the host's known subnets: no interface, no CIDR (ops then takes the address's /32).
		{name: "network-get", args: []string{"db", "--format=json"}, setup: func(f *fakeContext) { f.address = "192.0.2.7" },
			want: ok(`{"bind-addresses":[{"mac-address":"","interface-name":"","addresses":[{"hostname":"","value":"192.0.2.7","cidr":"","address":"192.0.2.7"}],"macaddress":"","interfacename":""}],"egress-subnets":["192.0.2.7/32"],"ingress-addresses":["192.0.2.7"]}` + "\n")},
		{name: "network-get", args: []string{"db", "--format=json"}, setup: func(f *fakeContext) { f.address = "" },
			want: failed(`no addresses attached to space for binding "db": the unit has no address`)},
		{name: "network-get", args: []string{"nope", "--format=json"}, want: failed(`no network config found for binding "nope"`)},
		{name: "network-get", args: []string{"db", "-r", "9", "--format=json"}, want: usage("network-get", `invalid value "9" for flag -r: relation not found`, u)},
		{name: "network-get", want: usage("network-get", "no binding name specified", u)},
		{name: "network-get", args: []string{"db", "website"}, want: usage("network-get", `unrecognized args: ["website"]`, u)},
	})
}

// On the local provider units have loopback addresses: network-get finds them on lo.
func TestNetworkGetLoopback(t *testing.T) {
	info, err := addressInfo("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	b := info.BindAddresses[0]
	if b.InterfaceName != "lo" || b.OldInterfaceName != "lo" || b.Addresses[0].CIDR != "127.0.0.0/8" ||
		b.Addresses[0].Value != "127.0.0.1" || info.EgressSubnets[0] != "127.0.0.1/32" || info.IngressAddresses[0] != "127.0.0.1" {
		t.Errorf("127.0.0.1: %+v", info)
	}
	// Another loopback address is on lo too, within its subnet.
	if info, err := addressInfo("127.0.1.9"); err != nil || info.BindAddresses[0].InterfaceName != "lo" || info.BindAddresses[0].Addresses[0].CIDR != "127.0.0.0/8" {
		t.Errorf("127.0.1.9: %+v, %v", info, err)
	}
	if ip := net.ParseIP("::1"); ip != nil {
		if info, err := addressInfo("::1"); err != nil || info.EgressSubnets[0] != "::1/128" {
			t.Errorf("::1: %+v, %v", info, err)
		}
	}
}

func TestGoalState(t *testing.T) {
	runCases(t, []toolCase{
		{name: "goal-state", args: []string{"--format=json"}, want: ok(`{"units":{"wordpress/0":{"status":"active","since":"2025-01-02T03:04:05Z"},` +
			`"wordpress/1":{"status":"dying","since":"2025-01-02T03:04:06Z"}},"relations":{"db":{"mysql":{"status":"joined","since":"2025-01-02T03:04:07Z"},"mysql/0":{"status":"active"}}}}` + "\n")},
		{name: "goal-state", want: ok(`units:
  wordpress/0:
    status: active
    since: "2025-01-02T03:04:05Z"
  wordpress/1:
    status: dying
    since: "2025-01-02T03:04:06Z"
relations:
  db:
    mysql:
      status: joined
      since: "2025-01-02T03:04:07Z"
    mysql/0:
      status: active
`)},
		{name: "goal-state", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.goal = nil }, want: ok(`{"units":{},"relations":{}}` + "\n")},
		{name: "goal-state", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.goal = &GoalState{Relations: map[string]map[string]GoalStatus{"db": nil}} },
			want: ok(`{"units":{},"relations":{"db":{}}}` + "\n")},
		{name: "goal-state", args: []string{"x"}, want: usage("goal-state", `unrecognized args: ["x"]`, "[options]")},
	})
}

func TestCredentialGet(t *testing.T) {
	const spec = `{"type":"local","name":"localhost","region":"localhost","credential":{"auth-type":"empty"},"is-controller-cloud":true}` + "\n"
	// Juju's YAML: every field, under its Go name in lower case.
	const specYAML = `type: local
name: localhost
region: localhost
endpoint: ""
identityendpoint: ""
storageendpoint: ""
credential:
  authtype: empty
  attributes: {}
  redacted: []
cacertificates: []
skiptlsverify: false
iscontrollercloud: true
`
	untrusted := func(f *fakeContext) { f.untrusted = true }
	runCases(t, []toolCase{
		{name: "credential-get", args: []string{"--format=json"}, want: ok(spec)},
		{name: "credential-get", args: []string{"--format", "yaml"}, want: ok(specYAML)},
		{name: "credential-get", want: ok(specYAML)},
		{name: "credential-get", args: []string{"--format=json"}, setup: untrusted, want: failed("cannot access cloud credentials: permission denied")},
		{name: "credential-get", setup: untrusted, want: failed("cannot access cloud credentials: permission denied")},
		{name: "credential-get", args: []string{"x"}, want: usage("credential-get", `unrecognized args: ["x"]`, "[options]")},
		{name: "credential-get", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.err = errors.New("connection lost") },
			want: failed("cannot access cloud credentials: connection lost")},
	})
}

func TestCharmState(t *testing.T) {
	runCases(t, []toolCase{
		{name: "state-get", args: []string{"StoredStateData[_stored]"}, want: ok("{a: 1}\n\n")},
		{name: "state-get", args: []string{"plain"}, want: ok("x\n")},
		// A missing key prints nothing: ops reads "" as missing.
		{name: "state-get", args: []string{"missing"}, want: ok("")},
		{name: "state-get", args: []string{"missing", "--format=json"}, want: ok(`""` + "\n")},
		{name: "state-get", args: []string{"--strict", "missing"}, want: failed(`"missing" not found`)},
		{name: "state-get", args: []string{"--format=json"}, want: ok(`{"StoredStateData[_stored]":"{a: 1}\n","plain":"x"}` + "\n")},
		{name: "state-get", args: []string{"-", "--format=json"}, setup: func(f *fakeContext) { f.state = nil }, want: ok("{}\n")},
		{name: "state-get", args: []string{"a", "b"}, want: usage("state-get", `unrecognized args: ["b"]`, "[options] [<key>|-]")},
		// ops: yaml.dump({key: yaml.dump(value)}, default_style='|') on stdin.
		{name: "state-set", args: []string{"--file", "-"}, stdin: "\"StoredStateData[_stored]\": |\n  a: 1\n  b: [1, 2]\n",
			want: ok(""), record: []string{"state-set map[StoredStateData[_stored]:a: 1\nb: [1, 2]\n]"}},
		{name: "state-set", args: []string{"a=1", "b="}, want: ok(""), record: []string{"state-set map[a:1 b:]"}},
		{name: "state-set", args: []string{"--file", "-", "k=override"}, stdin: "k: v\n", want: ok(""), record: []string{"state-set map[k:override]"}},
		{name: "state-set", want: ok(""), record: []string{}},
		{name: "state-set", args: []string{"x"}, want: usage("state-set", `expected "key=value", got "x"`, "[options] <key>=<value> ...")},
		{name: "state-delete", args: []string{"plain"}, want: ok(""), record: []string{"state-set map[plain:]"}},
		{name: "state-delete", want: usage("state-delete", "no key specified", "<key>")},
		{name: "state-delete", args: []string{"a", "b"}, want: usage("state-delete", `unrecognized args: ["b"]`, "<key>")},
		{name: "state-get", args: []string{"x"}, setup: func(f *fakeContext) { f.err = errors.New("connection lost") }, want: failed("connection lost")},
	})
}

// state-set then state-get and state-delete, as ops's _JujuStorageBackend runs them.
func TestCharmStateRoundTrip(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	if got := run(s, "\"k\": |\n  {a: 1}\n", "state-set", "--file", "-"); got != ok("") {
		t.Fatalf("state-set: %#v", got)
	}
	if got := run(s, "", "state-get", "k"); got != ok("{a: 1}\n\n") {
		t.Errorf("state-get: %#v", got)
	}
	if got := run(s, "", "state-delete", "k"); got != ok("") {
		t.Errorf("state-delete: %#v", got)
	}
	if got := run(s, "", "state-get", "k"); got != ok("") {
		t.Errorf("state-get after delete: %#v", got)
	}
}

func TestUnsupportedTools(t *testing.T) {
	f := newFake()
	f.err = errors.New("the Context must not be called")
	s := startServer(t, f)
	for name, why := range unsupportedTools {
		for _, args := range [][]string{nil, {"--format=json"}, {"-s", "data/0", "location"}, {"--", "--help"}} {
			want := failed(name + " is not supported by this controller (" + why + ")")
			if got := run(s, "", name, args...); got != want {
				t.Errorf("%s %q: %#v, want %#v", name, args, got, want)
			}
		}
		if got := run(s, "", name, "--help"); got.code != 0 || !strings.Contains(got.stdout, "Not supported by this controller: "+why+".") {
			t.Errorf("%s --help: %#v", name, got)
		}
	}
	for _, name := range []string{"storage-list", "storage-get", "storage-add", "juju-reboot", "add-metric",
		"pod-spec-set", "k8s-spec-set", "secret-add", "secret-get", "secret-set", "secret-remove",
		"secret-grant", "secret-revoke", "secret-ids", "secret-info-get"} {
		if _, ok := unsupportedTools[name]; !ok || !IsTool(name) {
			t.Errorf("%s is not installed as unsupported", name)
		}
	}
	for _, name := range []string{"action-get", "action-set", "action-log", "action-fail", "credential-get", "resource-get"} {
		if _, refused := unsupportedTools[name]; refused || !IsTool(name) {
			t.Errorf("%s is not answered", name)
		}
	}
}

// Every tool refuses an unknown flag or a bad --format with exit 2 and its usage, without
// calling the Context; the refused tools refuse whatever the flags (exit 1).
func TestBadFlags(t *testing.T) {
	f := newFake()
	f.err = errors.New("the Context must not be called")
	s := startServer(t, f)
	for _, name := range Names() {
		if _, refused := unsupportedTools[name]; refused {
			continue
		}
		want := usage(name, "unknown flag: --bogus", tools[name].usage)
		if got := run(s, "", name, "x", "--bogus"); got != want {
			t.Errorf("%s --bogus: %#v, want %#v", name, got, want)
		}
		if help := run(s, "", name, "--help"); !strings.Contains(help.stdout, "output format: smart, json or yaml") {
			continue // prints nothing: no --format, or one ignored as in Juju (relation-set, juju-log)
		}
		want = usage(name, `invalid format "xml", expected one of [smart json yaml]`, tools[name].usage)
		if got := run(s, "", name, "--format=xml"); got != want {
			t.Errorf("%s --format=xml: %#v, want %#v", name, got, want)
		}
	}
}
