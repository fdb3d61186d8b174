package apiserver

import (
	"context"
	"errors"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/logsink"
)

// logServer keeps the model log: agents write to it, juju debug-log reads and follows it.
type logServer struct {
	pb.UnimplementedLogServiceServer
	*service
}

func (s *logServer) sink() (*logsink.Sink, error) {
	if s.cfg.LogSink == nil {
		return nil, apierr.Errorf(apierr.NotSupported, "this controller keeps no model log")
	}
	return s.cfg.LogSink, nil
}

// WriteLogs appends an agent's records about itself (the admin may write any). A record
// without an entity is the caller's, one without a time is stamped now, and levels are
// normalised (unknown ones become INFO, as juju-log does with a level it does not know).
func (s *logServer) WriteLogs(ctx context.Context, req *pb.WriteLogsRequest) (*pb.WriteLogsResponse, error) {
	sink, err := s.sink()
	if err != nil {
		return nil, err
	}
	e := entityFrom(ctx)
	uuid := e.Model
	if e.IsAdmin() {
		m, err := s.model(ctx, req.GetModel())
		if err != nil {
			return nil, err
		}
		uuid = m.Uuid
	} else if req.GetModel() != "" && req.GetModel() != e.Model {
		return nil, errDenied
	}
	now := s.cfg.Now().UnixNano()
	records := make([]*pb.LogRecord, 0, len(req.GetRecords()))
	for _, r := range req.GetRecords() {
		entity := r.GetEntity()
		if entity == "" {
			entity = e.Tag
		}
		// Checked for the whole batch before anything is written: a refused call changes nothing.
		if !e.IsAdmin() && entity != e.Tag {
			return nil, apierr.Errorf(apierr.PermissionDenied, "permission denied: %s may not write log records of %q", e.Tag, entity)
		}
		level, ok := logsink.ParseLevel(r.GetLevel())
		if !ok {
			level = logsink.Info
		}
		t := r.GetTime()
		if t == 0 {
			t = now
		}
		records = append(records, &pb.LogRecord{Time: t, Entity: entity, Module: r.GetModule(), Level: level.String(), Message: r.GetMessage()})
	}
	if err := sink.Append(uuid, records); err != nil {
		return nil, err
	}
	return &pb.WriteLogsResponse{}, nil
}

// DebugLog sends the backlog asked for, then (unless no_tail) every new matching record until
// the caller cancels or the limit is reached, from every member of the controller (logpeers.go).
// The header is sent once the follow is in place on every member, so a client that waits for
// it sees every record written afterwards.
func (s *logServer) DebugLog(req *pb.DebugLogRequest, stream pb.LogService_DebugLogServer) error {
	ctx := stream.Context()
	sink, err := s.sink()
	if err != nil {
		return err
	}
	m, err := s.model(ctx, req.GetModel())
	if err != nil {
		return err
	}
	if req.GetLines() < 0 {
		return apierr.Errorf(apierr.NotValid, "lines %d not valid: must not be negative", req.GetLines())
	}
	if req.GetLimit() < 0 {
		return apierr.Errorf(apierr.NotValid, "limit %d not valid: must not be negative", req.GetLimit())
	}
	f, err := logsink.FilterFor(req)
	if err != nil {
		return err
	}
	// A caller's call shows every member's records (logpeers.go); a peer's, this member's.
	mode := logLocalMode(ctx)
	if mode == "" {
		if peers, tlsCfg := s.peers(ctx); len(peers) > 0 {
			return s.debugLogAll(ctx, req, m.Uuid, f, sink, peers, tlsCfg, stream)
		}
	}
	backlog, sub, err := sink.Tail(m.Uuid, f, !req.GetNoTail())
	if err != nil {
		return err
	}
	defer backlog.Close()
	if sub != nil {
		defer sub.Close()
	}
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	out := &logSender{stream: stream, limit: int(req.GetLimit())}
	switch {
	case mode == logLocalFollow:
		// The peer that asks has this backlog already.
	case req.GetReplay():
		err = backlog.Each(ctx, f, out.send)
	default:
		var recs []*pb.LogRecord
		recs, err = backlog.Last(ctx, f, int(req.GetLines()))
		for _, r := range recs {
			if err != nil {
				break
			}
			err = out.send(r)
		}
	}
	backlog.Close()
	if errors.Is(err, errLimit) {
		return nil
	}
	if err == nil && mode != "" {
		err = stream.Send(backlogEnd()) // for the peer that merges this backlog with others
	}
	if err != nil || sub == nil {
		return err
	}
	return s.follow(ctx, out, sub.Records(), nil)
}

// errLimit stops sending once a DebugLog request's limit is reached.
var errLimit = errors.New("limit reached")
