package apiserver

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

// The roles of the permission table, all relative to one target: the unit wordpress/0 and its
// machine. Each is a real agent credential.
const (
	roleUnit         = "unit"          // wordpress/0's own agent
	rolePeer         = "peer"          // wordpress/1: another unit of the same application
	roleOtherApp     = "other-app"     // mysql/0: a unit of another application
	roleDeployer     = "deployer"      // the machine agent of wordpress/0's machine
	roleOtherMachine = "other-machine" // the machine agent of mysql/0's machine
	roleOtherModel   = "other-model"   // wordpress/0 of another model, naming this model's entities
)

var allRoles = []string{roleUnit, rolePeer, roleOtherApp, roleDeployer, roleOtherMachine, roleOtherModel}

// permTarget is what the table's requests name.
type permTarget struct {
	model, machine, charm string
	db, wpPeer            int64  // the wordpress-mysql relation; wordpress's peer relation
	unitTask, machineTask string // a pending task of wordpress/0, and one of its machine
}

// permRow is one call: the request, naming entities of the target, and the roles that may make
// it. Every other role must be refused with PermissionDenied.
type permRow struct {
	method  string // "<Service>/<Method>"
	req     func(t permTarget) proto.Message
	allowed []string
}

func unitEntity(t permTarget) proto.Message {
	return &pb.AgentEntity{Model: t.model, Id: "wordpress/0"}
}

func machineEntity(t permTarget) proto.Message {
	return &pb.AgentEntity{Model: t.model, Id: t.machine}
}

func watchOf(kind string, id func(t permTarget) string) func(t permTarget) proto.Message {
	return func(t permTarget) proto.Message {
		return &pb.WatchRequest{Model: t.model, Targets: []*pb.WatchTarget{{Kind: kind, Id: id(t)}}}
	}
}

func fixed(s string) func(permTarget) string { return func(permTarget) string { return s } }

// permissionTable lists every method an agent credential may reach (agentAllowed). Rows that
// change the target for good (leaving scope, dying, removal) come last, in the order an agent
// would make them. The rule the table holds: an agent acts only on what is its own (its
// unit; its machine and the units it deploys; its application's shared data), and a caller
// naming anything else is refused with PermissionDenied, whether or not that thing exists, so
// that a refusal reveals nothing.
var permissionTable = []permRow{
	{"AgentService/GetMachine", machineEntity, []string{roleDeployer}},
	{"AgentService/SetMachineStatus", func(t permTarget) proto.Message {
		return &pb.SetStatusRequest{Model: t.model, Id: t.machine, Status: &pb.StatusInfo{Status: "started"}}
	}, []string{roleDeployer}},
	{"AgentService/MachineUnits", machineEntity, []string{roleDeployer}},
	{"AgentService/GetUnit", unitEntity, []string{roleUnit, roleDeployer}},
	{"AgentService/SetUnitPassword", func(t permTarget) proto.Message {
		// The password it already has, so the rightful call changes nothing.
		return &pb.SetPasswordRequest{Model: t.model, Id: "wordpress/0", Password: "secret-of-wordpress/0"}
	}, []string{roleDeployer}},
	{"AgentService/SetUnitStatus", func(t permTarget) proto.Message {
		return &pb.SetUnitStatusRequest{Model: t.model, Id: "wordpress/0", AgentStatus: &pb.StatusInfo{Status: "idle"}}
	}, []string{roleUnit, roleDeployer}},
	{"AgentService/GetCharmArchive", func(t permTarget) proto.Message {
		return &pb.CharmRef{Model: t.model, Url: t.charm}
	}, []string{roleUnit, rolePeer, roleDeployer}},
	{"AgentService/GetApplication", func(t permTarget) proto.Message {
		return &pb.AgentEntity{Model: t.model, Id: "wordpress"}
	}, []string{roleUnit, rolePeer}},
	{"AgentService/UnitRelations", func(t permTarget) proto.Message {
		return &pb.UnitRelationsRequest{Model: t.model, Unit: "wordpress/0", AllMembers: true}
	}, []string{roleUnit}},
	{"AgentService/EnterScope", func(t permTarget) proto.Message {
		return &pb.ScopeRequest{Model: t.model, Unit: "wordpress/0", RelationId: t.db}
	}, []string{roleUnit}},
	{"AgentService/RelationSettings", func(t permTarget) proto.Message {
		return &pb.RelationSettingsRequest{Model: t.model, Unit: "wordpress/0", RelationId: t.db, OfUnit: "mysql/0"}
	}, []string{roleUnit}},
	{"AgentService/SetRelationSettings", func(t permTarget) proto.Message {
		return &pb.SetRelationSettingsRequest{Model: t.model, Unit: "wordpress/0", RelationId: t.db, Settings: map[string]string{"k": "v"}}
	}, []string{roleUnit}},
	{"AgentService/ClaimLeadership", func(t permTarget) proto.Message {
		return &pb.ClaimLeadershipRequest{Model: t.model, Unit: "wordpress/0", TtlSeconds: 60}
	}, []string{roleUnit}},
	{"AgentService/LeaderSettings", unitEntity, []string{roleUnit}},
	{"AgentService/SetLeaderSettings", func(t permTarget) proto.Message {
		return &pb.SetLeaderSettingsRequest{Model: t.model, Unit: "wordpress/0", Settings: map[string]string{"k": "v"}}
	}, []string{roleUnit}},
	{"AgentService/SetUnitPorts", func(t permTarget) proto.Message {
		return &pb.SetUnitPortsRequest{Model: t.model, Unit: "wordpress/0", Open: []string{"80/tcp"}}
	}, []string{roleUnit}},
	{"AgentService/SetApplicationVersion", func(t permTarget) proto.Message {
		return &pb.SetApplicationVersionRequest{Model: t.model, Unit: "wordpress/0", Version: "1.0"}
	}, []string{roleUnit}},
	{"AgentService/SetApplicationStatus", func(t permTarget) proto.Message {
		return &pb.SetStatusRequest{Model: t.model, Id: "wordpress/0", Status: &pb.StatusInfo{Status: "active"}}
	}, []string{roleUnit}},
	{"AgentService/ClearResolved", unitEntity, []string{roleUnit}},
	{"AgentService/ApplicationStatus", unitEntity, []string{roleUnit}},
	{"AgentService/CharmState", unitEntity, []string{roleUnit}},
	{"AgentService/SetCharmState", func(t permTarget) proto.Message {
		return &pb.SetCharmStateRequest{Model: t.model, Unit: "wordpress/0", State: map[string]string{"k": "v"}}
	}, []string{roleUnit}},
	{"AgentService/GoalState", unitEntity, []string{roleUnit}},
	{"AgentService/GetCloudSpec", unitEntity, []string{roleUnit}},
	{"AgentService/SetUnitCharm", func(t permTarget) proto.Message {
		return &pb.SetUnitCharmRequest{Model: t.model, Unit: "wordpress/0", CharmUrl: t.charm}
	}, []string{roleUnit}},
	// resource-get: the unit's own agent, about its own application's resources (NotFound here:
	// wordpress declares none).
	{"AgentService/GetResource", func(t permTarget) proto.Message {
		return &pb.AgentResourceRequest{Model: t.model, Unit: "wordpress/0", Name: "test-file"}
	}, []string{roleUnit}},
	// Tasks: only the receiver's own agent, never its deployer (a task runs where it was sent).
	{"AgentService/ReceiverTasks", unitEntity, []string{roleUnit}},
	{"AgentService/ReceiverTasks", machineEntity, []string{roleDeployer}},
	// A wake-up's read: only the agent itself (it holds its task queue), not even the deployer.
	{"AgentService/UnitWorld", func(t permTarget) proto.Message {
		return &pb.UnitWorldRequest{Model: t.model, Unit: "wordpress/0", AllMembers: true, Tasks: true}
	}, []string{roleUnit}},
	{"AgentService/MachineWorld", func(t permTarget) proto.Message {
		return &pb.MachineWorldRequest{Model: t.model, Id: t.machine, Machine: true, Tasks: true}
	}, []string{roleDeployer}},
	{"AgentService/StartTask", func(t permTarget) proto.Message {
		return &pb.AgentTaskRequest{Model: t.model, Receiver: "wordpress/0", Id: t.unitTask}
	}, []string{roleUnit}},
	{"AgentService/StartTask", func(t permTarget) proto.Message {
		return &pb.AgentTaskRequest{Model: t.model, Receiver: t.machine, Id: t.machineTask}
	}, []string{roleDeployer}},
	{"AgentService/LogTask", func(t permTarget) proto.Message {
		return &pb.LogTaskRequest{Model: t.model, Receiver: "wordpress/0", Id: t.unitTask, Message: "m"}
	}, []string{roleUnit}},
	{"AgentService/FinishTask", func(t permTarget) proto.Message {
		return &pb.FinishTaskRequest{Model: t.model, Receiver: "wordpress/0", Id: t.unitTask, Status: "completed"}
	}, []string{roleUnit}},
	{"AgentService/FinishTask", func(t permTarget) proto.Message {
		return &pb.FinishTaskRequest{Model: t.model, Receiver: t.machine, Id: t.machineTask, Status: "completed"}
	}, []string{roleDeployer}},

	// Watches: a machine agent its machine and the units on it; a unit agent itself, its
	// application, the relations its application is in and their leadership; any unit agent
	// the relation documents (they name applications and endpoints only) and its model's
	// document (its configuration).
	{"StatusService/Watch", watchOf(state.KindUnit, fixed("wordpress/0")), []string{roleUnit, roleDeployer}},
	{"StatusService/Watch", watchOf(state.KindUnit, fixed("wordpress/")), nil},
	{"StatusService/Watch", watchOf(state.KindMachine, func(t permTarget) string { return t.machine }), []string{roleDeployer}},
	{"StatusService/Watch", watchOf(state.KindMachineUnits, func(t permTarget) string { return t.machine }), []string{roleDeployer}},
	{"StatusService/Watch", watchOf(state.KindTasks, fixed("wordpress/0")), []string{roleUnit}},
	{"StatusService/Watch", watchOf(state.KindTasks, func(t permTarget) string { return t.machine }), []string{roleDeployer}},
	{"StatusService/Watch", watchOf(state.KindTask, func(t permTarget) string { return t.unitTask }), nil},
	{"StatusService/Watch", watchOf(state.KindApplication, fixed("wordpress")), []string{roleUnit, rolePeer}},
	{"StatusService/Watch", watchOf(state.KindScope, func(t permTarget) string { return itoa(t.wpPeer) }), []string{roleUnit, rolePeer}},
	{"StatusService/Watch", watchOf(state.KindSettings, func(t permTarget) string { return itoa(t.wpPeer) }), []string{roleUnit, rolePeer}},
	{"StatusService/Watch", watchOf(state.KindLeadership, fixed("wordpress")), []string{roleUnit, rolePeer}},
	{"StatusService/Watch", watchOf(state.KindLeaderSettings, fixed("wordpress")), []string{roleUnit, rolePeer}},
	{"StatusService/Watch", watchOf(state.KindRelation, func(t permTarget) string { return itoa(t.wpPeer) }), []string{roleUnit, rolePeer, roleOtherApp}},
	{"StatusService/Watch", watchOf(state.KindModel, func(t permTarget) string { return t.model }), []string{roleUnit, rolePeer, roleOtherApp}},
	{"StatusService/Watch", watchOf(state.KindModel, fixed("")), nil}, // every key of the model
	{"StatusService/Watch", watchOf(state.KindCharm, func(t permTarget) string { return t.charm }), nil},
	// A stream any agent may open: each watch on it is checked as its own agent's (watchmany_test.go).
	{"StatusService/WatchMany", func(permTarget) proto.Message { return &pb.WatchManyRequest{} }, allRoles},

	{"LogService/WriteLogs", func(t permTarget) proto.Message {
		return &pb.WriteLogsRequest{Model: t.model, Records: []*pb.LogRecord{{Entity: "unit-wordpress-0", Message: "m"}}}
	}, []string{roleUnit}},
	{"SSHAgentService/WatchAuthorizedKeys", func(t permTarget) proto.Message {
		return &pb.WatchAuthorizedKeysRequest{Model: t.model, MachineId: t.machine}
	}, []string{roleDeployer}},
	{"SSHAgentService/SetSSHHost", func(t permTarget) proto.Message {
		return &pb.SetSSHHostRequest{Model: t.model, MachineId: t.machine, Error: "no sshd here"}
	}, []string{roleDeployer}},

	// Last: the calls that end the target, in the order its agents make them.
	{"AgentService/LeaveScope", func(t permTarget) proto.Message {
		return &pb.ScopeRequest{Model: t.model, Unit: "wordpress/0", RelationId: t.db}
	}, []string{roleUnit}},
	{"AgentService/SetUnitDying", unitEntity, []string{roleUnit}},
	{"AgentService/EnsureUnitDead", unitEntity, []string{roleUnit}},
	{"AgentService/EnsureMachineDead", machineEntity, []string{roleDeployer}}, // refused: its unit is still there
	{"AgentService/RemoveUnit", unitEntity, []string{roleDeployer}},
}

// ghostRows name what does not exist: every agent is refused, as for what exists and is not its
// own, so that a refusal does not tell the two apart.
var ghostRows = []permRow{
	{"AgentService/GetUnit", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: t.model, Id: "wordpress/9"} }, nil},
	{"AgentService/SetUnitStatus", func(t permTarget) proto.Message {
		return &pb.SetUnitStatusRequest{Model: t.model, Id: "ghost/0", AgentStatus: &pb.StatusInfo{Status: "idle"}}
	}, nil},
	{"AgentService/SetUnitPassword", func(t permTarget) proto.Message {
		return &pb.SetPasswordRequest{Model: t.model, Id: "ghost/0", Password: "0123456789abcdef0123"}
	}, nil},
	{"AgentService/GetMachine", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: t.model, Id: "99"} }, nil},
	{"AgentService/MachineUnits", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: t.model, Id: "99"} }, nil},
	{"AgentService/GetApplication", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: t.model, Id: "ghost"} }, nil},
	{"AgentService/GetCharmArchive", func(t permTarget) proto.Message { return &pb.CharmRef{Model: t.model, Url: "local:ghost-0"} }, nil},
	{"AgentService/ReceiverTasks", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: t.model, Id: "ghost/0"} }, nil},
	{"AgentService/UnitWorld", func(t permTarget) proto.Message { return &pb.UnitWorldRequest{Model: t.model, Unit: "ghost/0"} }, nil},
	{"AgentService/MachineWorld", func(t permTarget) proto.Message { return &pb.MachineWorldRequest{Model: t.model, Id: "99"} }, nil},
	{"AgentService/GetResource", func(t permTarget) proto.Message {
		return &pb.AgentResourceRequest{Model: t.model, Unit: "ghost/0", Name: "test-file"}
	}, nil},
	{"StatusService/Watch", watchOf(state.KindUnit, fixed("ghost/0")), nil},
	{"StatusService/Watch", watchOf(state.KindMachine, fixed("99")), nil},
	{"SSHAgentService/SetSSHHost", func(t permTarget) proto.Message {
		return &pb.SetSSHHostRequest{Model: t.model, MachineId: "99", Error: "no sshd here"}
	}, nil},
	{"AgentService/GetUnit", func(t permTarget) proto.Message { return &pb.AgentEntity{Model: "no-such-model", Id: "wordpress/0"} }, nil},
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// allServices is every service the controller serves.
var allServices = []*grpc.ServiceDesc{
	&pb.ControllerService_ServiceDesc, &pb.ApplicationService_ServiceDesc, &pb.MachineService_ServiceDesc,
	&pb.StatusService_ServiceDesc, &pb.AgentService_ServiceDesc, &pb.LogService_ServiceDesc,
	&pb.CompletionService_ServiceDesc, &pb.ActionService_ServiceDesc, &pb.KeyService_ServiceDesc,
	&pb.SSHAgentService_ServiceDesc, &pb.ResourceService_ServiceDesc,
}

// permCaller is one agent credential.
type permCaller struct{ tag, password, model string }

// call makes one call of fullMethod ("/juju.v1.<Service>/<Method>") as c with req. A stream
// counts as allowed once the server has answered with its header or a first message.
func (c permCaller) call(ctx context.Context, conn *grpc.ClientConn, sd *grpc.ServiceDesc, method string, req proto.Message) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, MetaTag, c.tag, MetaPassword, c.password, MetaModel, c.model)
	full := "/" + sd.ServiceName + "/" + method
	out, err := outputOf(sd.ServiceName, method)
	if err != nil {
		return err
	}
	for i := range sd.Streams {
		if sd.Streams[i].StreamName != method {
			continue
		}
		s, err := conn.NewStream(ctx, &sd.Streams[i], full)
		if err != nil {
			return apierr.FromStatus(err)
		}
		if err := s.SendMsg(req); err != nil {
			return apierr.FromStatus(err)
		}
		if err := s.CloseSend(); err != nil {
			return apierr.FromStatus(err)
		}
		if h, err := s.Header(); err == nil && h != nil {
			return nil
		}
		if err := s.RecvMsg(out); err != nil && !errors.Is(err, io.EOF) {
			return apierr.FromStatus(err)
		}
		return nil
	}
	return apierr.FromStatus(conn.Invoke(ctx, full, req, out))
}

func methodDescriptor(service, method string) (protoreflect.MethodDescriptor, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return nil, err
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, errors.New(service + " is not a service")
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return nil, errors.New(service + " has no method " + method)
	}
	return md, nil
}

func messageOf(name protoreflect.FullName) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, err
	}
	return mt.New().Interface(), nil
}

func outputOf(service, method string) (proto.Message, error) {
	md, err := methodDescriptor(service, method)
	if err != nil {
		return nil, err
	}
	return messageOf(md.Output().FullName())
}

func inputOf(service, method string) (proto.Message, error) {
	md, err := methodDescriptor(service, method)
	if err != nil {
		return nil, err
	}
	return messageOf(md.Input().FullName())
}

// methodsOf lists a service's methods and streams by name.
func methodsOf(sd *grpc.ServiceDesc) []string {
	var out []string
	for _, m := range sd.Methods {
		out = append(out, m.MethodName)
	}
	for _, s := range sd.Streams {
		out = append(out, s.StreamName)
	}
	return out
}

// startPermEnv is the relation env with a log sink, wordpress/0 leading a trusted wordpress,
// machine agents for wordpress/0's and mysql/0's machines, a pending task for wordpress/0 and
// one for its machine, and a wordpress/0 in another model.
func startPermEnv(t *testing.T) (*relTestEnv, map[string]permCaller, permTarget) {
	t.Helper()
	ctx := context.Background()
	env := startRelTestServer(t, withLogSink())
	st, model := env.st, env.model
	unitMachine := func(unit string) string {
		u, err := st.Unit(ctx, model, unit)
		if err != nil || u.MachineId == "" {
			t.Fatalf("machine of %s: %v %v", unit, u, err)
		}
		return u.MachineId
	}
	wpMachine, myMachine := unitMachine("wordpress/0"), unitMachine("mysql/0")
	if wpMachine == myMachine || wpMachine == unitMachine("wordpress/1") {
		t.Fatalf("units share machine %s: the table needs a machine of wordpress/0's alone", wpMachine)
	}
	env.sshMachineAgent(t, wpMachine)
	env.sshMachineAgent(t, myMachine)
	if claim, err := st.ClaimLeadership(ctx, model, "wordpress/0", 300); err != nil || !claim.Held {
		t.Fatalf("wordpress/0 leading: %v %v", claim, err)
	}
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "wordpress", Values: map[string]string{"trust": "true"}}); err != nil {
		t.Fatal(err)
	}
	app, err := st.Application(ctx, model, "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	tgt := permTarget{model: model, machine: wpMachine, charm: app.CharmUrl, db: env.db}
	rels, err := st.Relations(ctx, model)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rels {
		if r.Key == "wordpress:cluster" {
			tgt.wpPeer, found = r.Id, true
		}
	}
	if !found {
		t.Fatal("no wordpress peer relation")
	}
	for _, receiver := range []string{"wordpress/0", wpMachine} {
		op, err := st.Enqueue(ctx, model, state.EnqueueArgs{Receivers: []string{receiver}, Command: "true"})
		if err != nil {
			t.Fatal(err)
		}
		if receiver == wpMachine {
			tgt.machineTask = op.Tasks[0].Id
		} else {
			tgt.unitTask = op.Tasks[0].Id
		}
	}

	// Another model with a wordpress/0 of its own.
	other, err := st.AddModel(ctx, "other", "admin", "", "localhost", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := st.AddCharm(ctx, other.Uuid, charmArchive(t, map[string]string{"metadata.yaml": "name: wordpress\nsummary: blog\nbases: [ubuntu@22.04]\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, other.Uuid, state.DeployArgs{Name: "wordpress", CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddUnits(ctx, other.Uuid, "wordpress", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUnitPassword(ctx, other.Uuid, "wordpress/0", state.HashPassword("secret-of-other-wordpress/0")); err != nil {
		t.Fatal(err)
	}

	callers := map[string]permCaller{
		roleUnit:         {"unit-wordpress-0", "secret-of-wordpress/0", model},
		rolePeer:         {"unit-wordpress-1", "secret-of-wordpress/1", model},
		roleOtherApp:     {"unit-mysql-0", "secret-of-mysql/0", model},
		roleDeployer:     {"machine-" + wpMachine, "ssh-agent-of-machine-" + wpMachine, model},
		roleOtherMachine: {"machine-" + myMachine, "ssh-agent-of-machine-" + myMachine, model},
		roleOtherModel:   {"unit-wordpress-0", "secret-of-other-wordpress/0", other.Uuid},
	}
	return env, callers, tgt
}

// Every method an agent credential can reach checks that what it names is the caller's: the
// rightful agent is never refused, every other agent is refused with PermissionDenied. Every
// other method is the admin's alone. The methods come from the generated service descriptors,
// so a new method without a row here fails this test.
func TestAgentsSeeOnlyWhatIsTheirs(t *testing.T) {
	env, callers, tgt := startPermEnv(t)
	ctx := context.Background()
	conn := env.admin.Conn() // carries no credentials of its own: each call sends its caller's

	services := map[string]*grpc.ServiceDesc{}
	for _, sd := range allServices {
		services[strings.TrimPrefix(sd.ServiceName, "juju.v1.")] = sd
	}
	// Every method is either in the table (agents reach it) or refused to every agent.
	covered := map[string]bool{}
	for _, r := range permissionTable {
		covered[r.method] = true
	}
	for _, sd := range allServices {
		short := strings.TrimPrefix(sd.ServiceName, "juju.v1.")
		for _, m := range methodsOf(sd) {
			name := short + "/" + m
			full := "/" + sd.ServiceName + "/" + m
			if agentAllowed(full) {
				if !covered[name] {
					t.Errorf("%s: agents may call it but the permission table has no row for it", name)
				}
				continue
			}
			if covered[name] {
				t.Errorf("%s: in the permission table but agentAllowed refuses it", name)
			}
			req, err := inputOf(sd.ServiceName, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, role := range allRoles {
				err := callers[role].call(ctx, conn, sd, m, req)
				if !errors.Is(err, apierr.PermissionDenied) {
					t.Errorf("%s as %s (admin only): got %v, want PermissionDenied", name, role, err)
				}
			}
		}
	}

	for _, r := range slices.Concat(ghostRows, permissionTable) {
		service, method, _ := strings.Cut(r.method, "/")
		sd := services[service]
		if sd == nil || !slices.Contains(methodsOf(sd), method) {
			t.Errorf("%s: no such method", r.method)
			continue
		}
		req := r.req(tgt)
		// Wrong callers first: the rightful call may end the target (the last rows).
		for _, role := range allRoles {
			if slices.Contains(r.allowed, role) {
				continue
			}
			if err := callers[role].call(ctx, conn, sd, method, req); !errors.Is(err, apierr.PermissionDenied) {
				t.Errorf("%s %v as %s: got %v, want PermissionDenied", r.method, req, role, err)
			}
		}
		for _, role := range r.allowed {
			err := callers[role].call(ctx, conn, sd, method, req)
			if errors.Is(err, apierr.PermissionDenied) || errors.Is(err, apierr.Unauthenticated) {
				t.Errorf("%s %v as %s, its rightful caller: %v", r.method, req, role, err)
			}
		}
	}
}

// The rightful agent naming, beside itself, a part that is not its own (another receiver's
// task, a relation its application is not in, data only its leader may touch) is refused with
// PermissionDenied too. A charm other than its application's current one is not a question of
// ownership but of the refresh rule (NotValid, state).
func TestAgentsNameOnlyTheirOwnParts(t *testing.T) {
	env, callers, tgt := startPermEnv(t)
	ctx := context.Background()
	conn := env.admin.Conn()
	a := &pb.AgentService_ServiceDesc
	unit, peer := callers[roleUnit], callers[rolePeer]
	for _, c := range []struct {
		what   string
		caller permCaller
		method string
		req    proto.Message
	}{
		{"starting its machine's task", unit, "StartTask", &pb.AgentTaskRequest{Model: tgt.model, Receiver: "wordpress/0", Id: tgt.machineTask}},
		{"finishing its unit's task as the machine", callers[roleDeployer], "FinishTask",
			&pb.FinishTaskRequest{Model: tgt.model, Receiver: tgt.machine, Id: tgt.unitTask, Status: "completed"}},
		{"entering another application's relation", unit, "EnterScope", &pb.ScopeRequest{Model: tgt.model, Unit: "wordpress/0", RelationId: env.peer}},
		{"leaving another application's relation", unit, "LeaveScope", &pb.ScopeRequest{Model: tgt.model, Unit: "wordpress/0", RelationId: env.peer}},
		{"writing in another application's relation", unit, "SetRelationSettings",
			&pb.SetRelationSettingsRequest{Model: tgt.model, Unit: "wordpress/0", RelationId: env.peer, Settings: map[string]string{"a": "b"}}},
		{"writing another application's data", unit, "SetRelationSettings",
			&pb.SetRelationSettingsRequest{Model: tgt.model, Unit: "wordpress/0", RelationId: env.peer, Application: true, Settings: map[string]string{"a": "b"}}},
		{"reading another application's relation", unit, "RelationSettings",
			&pb.RelationSettingsRequest{Model: tgt.model, Unit: "wordpress/0", RelationId: env.peer, OfApplication: "mysql"}},
		{"a follower writing its application's data", peer, "SetRelationSettings",
			&pb.SetRelationSettingsRequest{Model: tgt.model, Unit: "wordpress/1", RelationId: env.db, Application: true, Settings: map[string]string{"a": "b"}}},
		{"a follower reading its application's data", peer, "RelationSettings",
			&pb.RelationSettingsRequest{Model: tgt.model, Unit: "wordpress/1", RelationId: env.db, OfApplication: "wordpress"}},
		{"a follower setting leader settings", peer, "SetLeaderSettings",
			&pb.SetLeaderSettingsRequest{Model: tgt.model, Unit: "wordpress/1", Settings: map[string]string{"a": "b"}}},
		{"a follower setting the application's status", peer, "SetApplicationStatus",
			&pb.SetStatusRequest{Model: tgt.model, Id: "wordpress/1", Status: &pb.StatusInfo{Status: "active"}}},
		{"a follower reading the application's status", peer, "ApplicationStatus", &pb.AgentEntity{Model: tgt.model, Id: "wordpress/1"}},
		{"an untrusted application's credential", callers[roleOtherApp], "GetCloudSpec", &pb.AgentEntity{Model: tgt.model, Id: "mysql/0"}},
	} {
		if err := c.caller.call(ctx, conn, a, c.method, c.req); !errors.Is(err, apierr.PermissionDenied) {
			t.Errorf("%s: got %v, want PermissionDenied", c.what, err)
		}
	}
	if _, _, err := env.st.UnitRelationSettings(ctx, env.model, env.peer, "wordpress/0"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("wordpress/0 has settings in mysql's peer relation: %v", err)
	}
	err := unit.call(ctx, conn, a, "SetUnitCharm", &pb.SetUnitCharmRequest{Model: tgt.model, Unit: "wordpress/0", CharmUrl: "local:mysql-0"})
	wantErr(t, "setting another application's charm", err, apierr.NotValid)
}
