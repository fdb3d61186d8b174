package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

// logTestEnv is a real API server with a log sink, an admin client and the agent of unit
// mysql/0 in the default model.
type logTestEnv struct {
	*testEnv
	unit *client.Client
}

func startLogTestServer(t *testing.T) *logTestEnv {
	t.Helper()
	env := &logTestEnv{testEnv: startTestEnv(t, withLogSink())}
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nbases: [ubuntu@22.04]\n", 2)
	if err := env.st.SetUnitPassword(context.Background(), env.model, "mysql/0", state.HashPassword("unit-secret")); err != nil {
		t.Fatal(err)
	}
	env.unit = env.dial(t, "unit-mysql-0", "unit-secret", env.model)
	return env
}

// readAll reads a NoTail stream to its end.
func readAll(t *testing.T, s *client.LogStream) []*pb.LogRecord {
	t.Helper()
	defer s.Close()
	var out []*pb.LogRecord
	for {
		r, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func logMessages(rs []*pb.LogRecord) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.GetMessage())
	}
	return strings.Join(out, " ")
}

func TestLogService(t *testing.T) {
	env := startLogTestServer(t)
	ctx := context.Background()

	t.Run("agent writes its own records", func(t *testing.T) {
		err := env.unit.WriteLogs(ctx, "", []*pb.LogRecord{
			{Module: "unit.mysql/0.install", Level: "INFO", Message: "one", Time: 1},
			{Entity: "unit-mysql-0", Module: "unit.mysql/0.juju-log", Level: "warn", Message: "two"},
			{Entity: "unit-mysql-0", Module: "unit.mysql/0.juju-log", Level: "shouting", Message: "three", Time: 3},
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := env.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: env.model, NoTail: true})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		if logMessages(got) != "one two three" {
			t.Fatalf("backlog = %q", logMessages(got))
		}
		if got[0].GetEntity() != "unit-mysql-0" || got[0].GetTime() != 1 {
			t.Errorf("entity not filled in: %v", got[0])
		}
		if got[1].GetLevel() != "WARNING" || got[1].GetTime() == 0 {
			t.Errorf("level or time not normalised: %v", got[1])
		}
		if got[2].GetLevel() != "INFO" {
			t.Errorf("unknown level = %q, want INFO", got[2].GetLevel())
		}
	})

	t.Run("agent may not write for others", func(t *testing.T) {
		err := env.unit.WriteLogs(ctx, "", []*pb.LogRecord{
			{Message: "mine"}, {Entity: "unit-mysql-1", Message: "forged"},
		})
		if !errors.Is(err, apierr.PermissionDenied) {
			t.Fatalf("forged entity = %v, want PermissionDenied", err)
		}
		other, err := env.admin.AddModel(ctx, "other", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.unit.WriteLogs(ctx, other.GetUuid(), []*pb.LogRecord{{Message: "elsewhere"}}); !errors.Is(err, apierr.PermissionDenied) {
			t.Fatalf("other model = %v, want PermissionDenied", err)
		}
		if _, err := env.unit.DebugLog(ctx, &pb.DebugLogRequest{NoTail: true}); !errors.Is(err, apierr.PermissionDenied) {
			t.Fatalf("agent reading the log = %v, want PermissionDenied", err)
		}
		// The refused batch changed nothing, not even its allowed record.
		s, err := env.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: env.model, NoTail: true, Replay: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := logMessages(readAll(t, s)); strings.Contains(got, "mine") || strings.Contains(got, "forged") {
			t.Errorf("refused batch written: %q", got)
		}
	})

	t.Run("admin writes any entity", func(t *testing.T) {
		err := env.admin.WriteLogs(ctx, env.model, []*pb.LogRecord{
			{Entity: "machine-1", Module: "juju.worker.provisioner", Level: "ERROR", Message: "four"},
			{Entity: "unit-mysql-1", Module: "unit.mysql/1.juju-log", Level: "DEBUG", Message: "five"},
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("backlog filters and lines", func(t *testing.T) {
		tests := []struct {
			req  *pb.DebugLogRequest
			want string
		}{
			{&pb.DebugLogRequest{Lines: 2}, "four five"},
			{&pb.DebugLogRequest{}, "one two three four five"},
			{&pb.DebugLogRequest{Replay: true, Lines: 1}, "one two three four five"},
			{&pb.DebugLogRequest{Include: []string{"mysql"}}, "one two three five"},
			{&pb.DebugLogRequest{Include: []string{"mysql"}, Exclude: []string{"mysql/1"}}, "one two three"},
			{&pb.DebugLogRequest{Include: []string{"1"}}, "four"},
			{&pb.DebugLogRequest{Level: "warning"}, "two four"},
			{&pb.DebugLogRequest{IncludeModule: []string{"unit.mysql/0"}, ExcludeModule: []string{"unit.mysql/0.install"}}, "two three"},
			// debug-log --replay --limit 2: the first records; --limit 3: the last ones.
			{&pb.DebugLogRequest{Replay: true, Limit: 2}, "one two"},
			{&pb.DebugLogRequest{Lines: 3, Limit: 3}, "three four five"},
			{&pb.DebugLogRequest{Include: []string{"mysql"}, Replay: true, Limit: 4}, "one two three five"},
		}
		for _, tt := range tests {
			tt.req.Model = env.model
			tt.req.NoTail = true
			s, err := env.admin.DebugLog(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := logMessages(readAll(t, s)); got != tt.want {
				t.Errorf("%v: got %q, want %q", tt.req, got, tt.want)
			}
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, tt := range []struct {
			req  *pb.DebugLogRequest
			want error
		}{
			{&pb.DebugLogRequest{Model: env.model, Level: "loud"}, apierr.NotValid},
			{&pb.DebugLogRequest{Model: env.model, Include: []string{"My App"}}, apierr.NotValid},
			{&pb.DebugLogRequest{Model: env.model, Lines: -1}, apierr.NotValid},
			{&pb.DebugLogRequest{Model: env.model, Limit: -1}, apierr.NotValid},
			{&pb.DebugLogRequest{Model: "nope"}, apierr.NotFound},
		} {
			if _, err := env.admin.DebugLog(ctx, tt.req); !errors.Is(err, tt.want) {
				t.Errorf("%v: %v, want %v", tt.req, err, tt.want)
			}
		}
	})

	t.Run("follow", func(t *testing.T) {
		s, err := env.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: "default", Lines: 1, Include: []string{"mysql/0"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if r, err := s.Next(); err != nil || r.GetMessage() != "three" {
			t.Fatalf("backlog = %v %v", r, err)
		}
		// DebugLog returned once the follow was in place: this record cannot be missed.
		if err := env.admin.WriteLogs(ctx, env.model, []*pb.LogRecord{{Entity: "unit-mysql-1", Message: "filtered out"}}); err != nil {
			t.Fatal(err)
		}
		if err := env.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Level: "INFO", Message: "six"}}); err != nil {
			t.Fatal(err)
		}
		next := make(chan *pb.LogRecord, 1)
		go func() { r, _ := s.Next(); next <- r }()
		select {
		case r := <-next:
			if r.GetMessage() != "six" {
				t.Fatalf("followed %v, want six", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("new record not delivered")
		}
		s.Close()
		if _, err := s.Next(); !errors.Is(err, context.Canceled) {
			t.Errorf("after Close: %v", err)
		}
	})

	t.Run("limit ends a follow", func(t *testing.T) {
		s, err := env.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: env.model, Lines: 1, Limit: 2, Include: []string{"mysql/0"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if r, err := s.Next(); err != nil || r.GetMessage() != "six" {
			t.Fatalf("backlog = %v %v", r, err)
		}
		if err := env.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "seven"}, {Message: "eight"}}); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() {
			r, err := s.Next()
			_, end := s.Next()
			done <- r.GetMessage() + " " + fmt.Sprint(err) + " " + fmt.Sprint(end)
		}()
		select {
		case got := <-done:
			if got != "seven <nil> EOF" {
				t.Fatalf("after the backlog: %s, want seven then the end of the stream", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("stream not ended by its limit")
		}
	})

	t.Run("shutdown ends followers", func(t *testing.T) {
		s, err := env.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: env.model, Lines: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		env.stop()
		done := make(chan error, 1)
		go func() { _, err := s.Next(); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, apierr.Unavailable) {
				t.Errorf("follower ended with %v, want Unavailable", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("follower not ended by shutdown")
		}
	})
}

func TestLogServiceWithoutSink(t *testing.T) {
	s := &logServer{service: &service{}}
	if _, err := s.WriteLogs(context.Background(), &pb.WriteLogsRequest{}); !errors.Is(err, apierr.NotSupported) {
		t.Errorf("WriteLogs without a sink = %v", err)
	}
}
