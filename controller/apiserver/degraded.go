package apiserver

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/store"
)

// MetaDegraded is the response header of a call served while the controller is degraded (this
// member has lost the store's quorum); its value says why. The client hands it to
// Config.OnDegraded, and the CLI prints it as a warning.
const MetaDegraded = "x-juju-degraded"

// whenDegraded is what a method gets while this member has no quorum.
type whenDegraded int

const (
	// refuse: the call writes to the store, which needs the quorum; it fails at once with
	// apierr.NoQuorum rather than wait for its deadline.
	refuse whenDegraded = iota
	// serve: the call only reads the store; it reads this member's copy (which may be stale,
	// hence the header) instead of asking the leader, which does not answer.
	serve
)

// degradedMethods classifies every method of every service; a method missing here is refused
// (TestEveryMethodIsClassified fails first). A read that also writes, however rarely, is a
// write: served with reads that skip the leader, its write would hang until its deadline.
var degradedMethods = map[string]whenDegraded{
	pb.ActionService_ApplicationActions_FullMethodName: serve,
	pb.ActionService_Enqueue_FullMethodName:            refuse,
	pb.ActionService_GetTask_FullMethodName:            serve,
	pb.ActionService_WatchTasks_FullMethodName:         serve,
	pb.ActionService_ListOperations_FullMethodName:     serve,
	pb.ActionService_GetOperation_FullMethodName:       serve,
	pb.ActionService_CancelTasks_FullMethodName:        refuse,

	// Agents keep reading what they run (units, relations, settings, their charm) and keep
	// their workloads up; every change they would record waits for the quorum.
	pb.AgentService_GetMachine_FullMethodName:            serve,
	pb.AgentService_SetMachineStatus_FullMethodName:      refuse,
	pb.AgentService_MachineUnits_FullMethodName:          serve,
	pb.AgentService_GetUnit_FullMethodName:               serve,
	pb.AgentService_SetUnitPassword_FullMethodName:       refuse,
	pb.AgentService_SetUnitStatus_FullMethodName:         refuse,
	pb.AgentService_GetCharmArchive_FullMethodName:       serve,
	pb.AgentService_GetApplication_FullMethodName:        serve,
	pb.AgentService_UnitRelations_FullMethodName:         serve,
	pb.AgentService_EnterScope_FullMethodName:            refuse,
	pb.AgentService_LeaveScope_FullMethodName:            refuse,
	pb.AgentService_SetUnitDying_FullMethodName:          refuse,
	pb.AgentService_EnsureUnitDead_FullMethodName:        refuse,
	pb.AgentService_RemoveUnit_FullMethodName:            refuse,
	pb.AgentService_EnsureMachineDead_FullMethodName:     refuse,
	pb.AgentService_RelationSettings_FullMethodName:      serve,
	pb.AgentService_SetRelationSettings_FullMethodName:   refuse,
	pb.AgentService_ClaimLeadership_FullMethodName:       refuse, // a lease: written through the quorum
	pb.AgentService_LeaderSettings_FullMethodName:        serve,
	pb.AgentService_SetLeaderSettings_FullMethodName:     refuse,
	pb.AgentService_SetUnitPorts_FullMethodName:          refuse,
	pb.AgentService_SetApplicationVersion_FullMethodName: refuse,
	pb.AgentService_SetApplicationStatus_FullMethodName:  refuse,
	pb.AgentService_ClearResolved_FullMethodName:         refuse,
	pb.AgentService_ApplicationStatus_FullMethodName:     serve,
	pb.AgentService_CharmState_FullMethodName:            serve,
	pb.AgentService_SetCharmState_FullMethodName:         refuse,
	pb.AgentService_GoalState_FullMethodName:             serve,
	pb.AgentService_GetCloudSpec_FullMethodName:          serve,
	pb.AgentService_SetUnitCharm_FullMethodName:          refuse,
	pb.AgentService_ReceiverTasks_FullMethodName:         serve,
	pb.AgentService_StartTask_FullMethodName:             refuse,
	pb.AgentService_LogTask_FullMethodName:               refuse,
	pb.AgentService_FinishTask_FullMethodName:            refuse,
	pb.AgentService_GetResource_FullMethodName:           refuse, // records the revision the unit has
	pb.AgentService_UnitWorld_FullMethodName:             serve,
	pb.AgentService_MachineWorld_FullMethodName:          serve,

	pb.ApplicationService_UploadCharm_FullMethodName:        refuse,
	pb.ApplicationService_Deploy_FullMethodName:             refuse,
	pb.ApplicationService_AddUnits_FullMethodName:           refuse,
	pb.ApplicationService_GetConstraints_FullMethodName:     serve,
	pb.ApplicationService_SetConstraints_FullMethodName:     refuse,
	pb.ApplicationService_Integrate_FullMethodName:          refuse,
	pb.ApplicationService_RemoveRelation_FullMethodName:     refuse,
	pb.ApplicationService_RemoveUnits_FullMethodName:        refuse,
	pb.ApplicationService_RemoveApplications_FullMethodName: refuse,
	pb.ApplicationService_ShowUnit_FullMethodName:           serve,
	pb.ApplicationService_ResolveUnitErrors_FullMethodName:  refuse,
	pb.ApplicationService_GetConfig_FullMethodName:          serve,
	pb.ApplicationService_SetConfig_FullMethodName:          refuse,
	pb.ApplicationService_SetCharm_FullMethodName:           refuse,
	pb.ApplicationService_Expose_FullMethodName:             refuse,
	pb.ApplicationService_Unexpose_FullMethodName:           refuse,

	pb.BundleService_DescribeModel_FullMethodName:  serve,
	pb.BundleService_SetAnnotations_FullMethodName: refuse,

	pb.CompletionService_CompleteNames_FullMethodName: serve,

	pb.ControllerService_Version_FullMethodName:                serve, // also the CLI's login
	pb.ControllerService_ListModels_FullMethodName:             serve,
	pb.ControllerService_AddModel_FullMethodName:               refuse,
	pb.ControllerService_GetModel_FullMethodName:               serve,
	pb.ControllerService_GetModelConstraints_FullMethodName:    serve,
	pb.ControllerService_SetModelConstraints_FullMethodName:    refuse,
	pb.ControllerService_DestroyModel_FullMethodName:           refuse, // its dry run too: one method, one answer
	pb.ControllerService_GetModelConfig_FullMethodName:         serve,
	pb.ControllerService_SetModelConfig_FullMethodName:         refuse,
	pb.ControllerService_GetModelDefaults_FullMethodName:       serve,
	pb.ControllerService_SetModelDefaults_FullMethodName:       refuse,
	pb.ControllerService_EnableHA_FullMethodName:               refuse, // membership changes need the quorum
	pb.ControllerService_RemoveControllerMember_FullMethodName: refuse,
	pb.ControllerService_ControllerMembers_FullMethodName:      serve, // which members are down

	// WriteLogs writes only this member's own log files (logsink), never the store: the hook
	// output of a degraded spell is kept.
	pb.LogService_WriteLogs_FullMethodName: serve,
	pb.LogService_DebugLog_FullMethodName:  serve,

	pb.MachineService_AddMachines_FullMethodName:       refuse,
	pb.MachineService_RemoveMachines_FullMethodName:    refuse,
	pb.MachineService_RetryProvisioning_FullMethodName: refuse,

	pb.ResourceService_UploadResource_FullMethodName: refuse,
	pb.ResourceService_ListResources_FullMethodName:  serve,

	pb.KeyService_ListKeys_FullMethodName:        serve,
	pb.KeyService_AddKeys_FullMethodName:         refuse,
	pb.KeyService_RemoveKeys_FullMethodName:      refuse,
	pb.KeyService_EnsureClientKey_FullMethodName: refuse, // adds the key when the model lacks it
	pb.KeyService_SSHTarget_FullMethodName:       serve,

	pb.SSHAgentService_WatchAuthorizedKeys_FullMethodName: serve,
	pb.SSHAgentService_SetSSHHost_FullMethodName:          refuse,

	pb.StatusService_FullStatus_FullMethodName: serve,
	pb.StatusService_Watch_FullMethodName:      serve,
	pb.StatusService_WatchMany_FullMethodName:  serve,
}

type degradedKey struct{}

// degradedGate refuses writes and marks reads while Config.Degraded says the controller is
// degraded. It is two interceptors around authentication: mark, before it, asks Degraded once
// per call and, when degraded, makes the call's store reads (the credential check's first)
// skip the leader; gate, after it, refuses or serves by that same verdict, so an
// unauthenticated caller learns nothing and a call is never half degraded.
type degradedGate struct {
	degraded func() string
}

func newDegradedGate(degraded func() string) degradedGate {
	if degraded == nil {
		degraded = func() string { return "" }
	}
	return degradedGate{degraded: degraded}
}

func (g degradedGate) mark(ctx context.Context) context.Context {
	reason := g.degraded()
	if reason == "" {
		return ctx
	}
	return store.WithSerializableReads(context.WithValue(ctx, degradedKey{}, reason))
}

// verdict is the reason mark recorded, "" when healthy, and whether method may be served.
func verdict(ctx context.Context, method string) (reason string, served bool) {
	reason, _ = ctx.Value(degradedKey{}).(string)
	return reason, reason == "" || degradedMethods[method] == serve
}

func noQuorum(reason string) error {
	return apierr.ToStatus(apierr.Errorf(apierr.NoQuorum,
		"controller has no quorum: %s; writes are refused until a majority of its members is back", reason))
}

// degradedHeader carries reason as a header value: printable ASCII only, as gRPC wants.
func degradedHeader(reason string) metadata.MD {
	return metadata.Pairs(MetaDegraded, strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return '?'
		}
		return r
	}, reason))
}

func (g degradedGate) markUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(g.mark(ctx), req)
}

func (g degradedGate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	reason, served := verdict(ctx, info.FullMethod)
	if !served {
		return nil, noQuorum(reason)
	}
	if reason != "" {
		_ = grpc.SetHeader(ctx, degradedHeader(reason)) // fails only once headers are sent: not yet
	}
	return handler(ctx, req)
}

// markedStream is a server stream with the context mark made.
type markedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *markedStream) Context() context.Context { return s.ctx }

func (g degradedGate) markStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &markedStream{ServerStream: ss, ctx: g.mark(ss.Context())})
}

func (g degradedGate) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	reason, served := verdict(ss.Context(), info.FullMethod)
	if !served {
		return noQuorum(reason)
	}
	if reason != "" {
		// Set, not sent: handlers that send their header themselves (Watch, DebugLog) still
		// decide when, and this rides along.
		_ = ss.SetHeader(degradedHeader(reason))
	}
	return handler(srv, ss)
}
