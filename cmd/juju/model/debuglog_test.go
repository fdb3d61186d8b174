package model

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdDebugLog(t *testing.T) {
	tests := []struct {
		args, wantErr string
		check         func(o *debugLogOptions) bool
	}{
		// Not a terminal (the test streams): the log is not followed unless asked to.
		{args: "", check: func(o *debugLogOptions) bool {
			return o.Lines == 10 && o.NoTail && !o.Tail && !o.Replay && !o.HasLimit && o.Level == "" && o.Include == nil
		}},
		{args: "-i mysql/0 --include wordpress,haproxy -x mysql/1 --exclude=a,b", check: func(o *debugLogOptions) bool {
			return strings.Join(o.Include, " ") == "mysql/0 wordpress haproxy" && strings.Join(o.Exclude, " ") == "mysql/1 a b"
		}},
		{args: "--include-module unit.mysql,juju.worker --exclude-module juju.worker.uniter", check: func(o *debugLogOptions) bool {
			return strings.Join(o.IncludeModule, " ") == "unit.mysql juju.worker" && strings.Join(o.ExcludeModule, " ") == "juju.worker.uniter"
		}},
		{args: "-l warn", check: func(o *debugLogOptions) bool { return o.Level == "WARNING" }},
		{args: "--level error", check: func(o *debugLogOptions) bool { return o.Level == "ERROR" }},
		{args: "-n 50", check: func(o *debugLogOptions) bool { return o.Lines == 50 && o.Tail && !o.NoTail }},
		{args: "-n 0", check: func(o *debugLogOptions) bool { return o.Lines == 0 && o.Tail }},
		{args: "--limit 20", check: func(o *debugLogOptions) bool { return o.HasLimit && o.Limit == 20 && o.NoTail && !o.Tail }},
		{args: "--limit 0", check: func(o *debugLogOptions) bool { return o.HasLimit && o.Limit == 0 && o.NoTail }},
		{args: "--replay --limit 5 --no-tail", check: func(o *debugLogOptions) bool { return o.Replay && o.Limit == 5 && o.NoTail }},
		{args: "--replay --tail", check: func(o *debugLogOptions) bool { return o.Replay && o.Tail && !o.NoTail }},
		{args: "--tail=false", check: func(o *debugLogOptions) bool { return o.NoTail && !o.Tail }},
		{args: "--utc --date --ms -m other", check: func(o *debugLogOptions) bool { return o.UTC && o.Date && o.MS && o.Model == "other" }},
		// Juju's incompatible pairs, with its messages.
		{args: "--tail --no-tail", wantErr: "setting --tail and --no-tail not valid"},
		{args: "--tail=false --no-tail", wantErr: "setting --tail and --no-tail not valid"},
		{args: "--limit 20 --tail", wantErr: "setting --tail and --limit not valid"},
		{args: "--limit 0 --tail", wantErr: "setting --tail and --limit not valid"},
		{args: "--lines 30 --no-tail", wantErr: "setting --no-tail and --lines not valid"},
		{args: "--lines 30 --limit 50", wantErr: "setting --limit and --lines not valid"},
		{args: "--lines 0 --limit 50", wantErr: "setting --limit and --lines not valid"},
		{args: "--replay -n 5", wantErr: "setting --replay and --lines not valid"},
		{args: "--level loud", wantErr: `level value "loud" is not one of "TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"`},
		{args: "-n many", wantErr: `invalid argument "many" for "-n, --lines" flag: strconv.ParseUint: parsing "many": invalid syntax`},
		{args: "--limit -1", wantErr: `invalid argument "-1" for "--limit" flag: strconv.ParseUint: parsing "-1": invalid syntax`},
		{args: "mysql/0", wantErr: `unrecognized args: ["mysql/0"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *debugLogOptions
			cmd := NewCmdDebugLog(cmdutil.TestFactory(), func(o *debugLogOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				// Flag parsing errors come from cobra here; root turns them into usage errors.
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(tt.wantErr, "invalid argument") {
					checkErr(t, err, tt.wantErr, true)
				}
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			checkErr(t, err, "", false)
			if !tt.check(got) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// On a terminal the log is followed by default, as Juju does; --limit still exits.
func TestDebugLogFollowsOnATerminal(t *testing.T) {
	for args, wantTail := range map[string]bool{"": true, "--replay": true, "--limit 5": false, "--no-tail": false} {
		f := cmdutil.TestFactory()
		f.IO.IsTerminal = true
		var got *debugLogOptions
		cmd := NewCmdDebugLog(f, func(o *debugLogOptions) error { got = o; return nil })
		checkErr(t, execute(cmd, args), "", false)
		if got.Tail != wantTail || got.NoTail == wantTail {
			t.Errorf("%q on a terminal: tail=%v no-tail=%v, want tail=%v", args, got.Tail, got.NoTail, wantTail)
		}
	}
}

// fakeLog answers DebugLog with records, then ends (no tail), blocks until cancelled (tail) or
// fails with err.
type fakeLog struct {
	records []*jujupb.LogRecord
	err     error  // returned by Next after the records
	callErr error  // returned by DebugLog
	drained func() // called when a following stream has handed out every record
	req     *jujupb.DebugLogRequest
}

func (f *fakeLog) DebugLog(ctx context.Context, req *jujupb.DebugLogRequest) (logStream, error) {
	f.req = req
	if f.callErr != nil {
		return nil, f.callErr
	}
	return &fakeStream{ctx: ctx, f: f, noTail: req.GetNoTail()}, nil
}

type fakeStream struct {
	ctx    context.Context
	f      *fakeLog
	i      int
	noTail bool
}

func (s *fakeStream) Next() (*jujupb.LogRecord, error) {
	if s.i < len(s.f.records) {
		s.i++
		return s.f.records[s.i-1], nil
	}
	if s.f.err != nil {
		return nil, s.f.err
	}
	if s.noTail {
		return nil, io.EOF
	}
	if s.f.drained != nil {
		s.f.drained()
	}
	<-s.ctx.Done()
	return nil, context.Canceled
}

func (s *fakeStream) Close() {}

var logTime = time.Date(2026, 3, 4, 14, 5, 33, 123456789, time.UTC)

func sampleLog() []*jujupb.LogRecord {
	return []*jujupb.LogRecord{
		{Time: logTime.UnixNano(), Entity: "unit-mysql-0", Module: "unit.mysql/0.juju-log", Level: "INFO", Message: "installing mysql"},
		{Time: logTime.Add(1500 * time.Millisecond).UnixNano(), Entity: "unit-mysql-0", Module: "unit.mysql/0.install", Level: "WARNING", Message: "apt: cache is stale"},
		{Time: logTime.Add(61 * time.Second).UnixNano(), Entity: "machine-1", Module: "juju.worker.provisioner", Level: "ERROR", Message: "cannot start instance"},
	}
}

func TestDebugLogRun(t *testing.T) {
	// Local times are shown in this zone unless --utc.
	cest := time.FixedZone("CEST", 2*3600)
	tests := []struct {
		name, args string
		fake       *fakeLog
		cancel     bool // interrupt once the records are printed
		wantErr    string
		check      func(*jujupb.DebugLogRequest) bool
	}{
		{name: "no-tail", args: "--no-tail -i mysql -x mysql/1 -l info --include-module unit", fake: &fakeLog{records: sampleLog()},
			check: func(r *jujupb.DebugLogRequest) bool {
				return r.GetNoTail() && r.GetLines() == 10 && r.GetLevel() == "INFO" && r.GetModel() == "uuid-default" &&
					strings.Join(r.GetInclude(), ",") == "mysql" && strings.Join(r.GetExclude(), ",") == "mysql/1" &&
					strings.Join(r.GetIncludeModule(), ",") == "unit"
			}},
		{name: "date-ms-utc", args: "--no-tail --date --ms --utc", fake: &fakeLog{records: sampleLog()}},
		{name: "replay-follow-interrupted", args: "--replay --tail", fake: &fakeLog{records: sampleLog()}, cancel: true,
			check: func(r *jujupb.DebugLogRequest) bool { return r.GetReplay() && r.GetLines() == 0 && !r.GetNoTail() }},
		{name: "lines", args: "-n 2", fake: &fakeLog{records: sampleLog()[1:]}, cancel: true,
			check: func(r *jujupb.DebugLogRequest) bool { return r.GetLines() == 2 && !r.GetNoTail() && r.GetLimit() == 0 }},
		{name: "limit", args: "--limit 2", fake: &fakeLog{records: sampleLog()[1:]},
			check: func(r *jujupb.DebugLogRequest) bool {
				return r.GetLines() == 2 && r.GetLimit() == 2 && r.GetNoTail() && !r.GetReplay()
			}},
		// --limit 0 is every line there is: the log from its beginning.
		{name: "limit-all", args: "--limit 0", fake: &fakeLog{records: sampleLog()},
			check: func(r *jujupb.DebugLogRequest) bool { return r.GetReplay() && r.GetLimit() == 0 && r.GetNoTail() }},
		{name: "replay-limit", args: "--replay --limit 2", fake: &fakeLog{records: sampleLog()[:2]},
			check: func(r *jujupb.DebugLogRequest) bool {
				return r.GetReplay() && r.GetLimit() == 2 && r.GetLines() == 0 && r.GetNoTail()
			}},
		{name: "lines-all", args: "-n 0", fake: &fakeLog{records: sampleLog()}, cancel: true,
			check: func(r *jujupb.DebugLogRequest) bool { return r.GetReplay() && !r.GetNoTail() }},
		{name: "stream-error", args: "", fake: &fakeLog{records: sampleLog()[:1], err: apierr.Errorf(apierr.Unavailable, "controller shutting down")},
			wantErr: `reading the log of model "default": controller shutting down`},
		{name: "call-error", args: "-i mysql", fake: &fakeLog{callErr: apierr.Errorf(apierr.PermissionDenied, "permission denied")},
			wantErr: `reading the log of model "default": permission denied`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				// The fake blocks after its records until ctx ends, like a follow: Ctrl-C.
				tt.fake.drained = cancel
			}
			cmd := NewCmdDebugLog(cmdutil.TestFactory(), func(o *debugLogOptions) error {
				o.IO = ios
				o.ResolveModel = testModel
				o.Location = cest
				o.Client = func(context.Context) (debugLogAPI, error) { return tt.fake, nil }
				return debugLogRun(ctx, o)
			})
			err := execute(cmd, tt.args)
			checkErr(t, err, tt.wantErr, false)
			if tt.check != nil && !tt.check(tt.fake.req) {
				t.Errorf("request = %v", tt.fake.req)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut.String())
			}
			golden.Assert(t, out.String(), "debug-log/"+tt.name+".stdout.golden")
		})
	}
}

func TestDebugLogColoursLevels(t *testing.T) {
	s := &output.Streams{Color: true}
	if got := paintLevel(s, "ERROR"); got != string(output.Red)+"ERROR\x1b[0m" {
		t.Errorf("ERROR = %q", got)
	}
	if got := paintLevel(s, "INFO"); got != "INFO" {
		t.Errorf("INFO = %q", got)
	}
	if got := paintLevel(&output.Streams{}, "ERROR"); got != "ERROR" {
		t.Errorf("no colour = %q", got)
	}
}

func TestDebugLogInterruptedBeforeStream(t *testing.T) {
	ios, _, _ := output.TestStreams()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := &debugLogOptions{IO: ios, ResolveModel: testModel, Lines: 10, Tail: true,
		Client: func(context.Context) (debugLogAPI, error) { return &fakeLog{callErr: context.Canceled}, nil }}
	if err := debugLogRun(ctx, opts); err != nil {
		t.Errorf("interrupted = %v, want success", err)
	}
	if err := debugLogRun(context.Background(), &debugLogOptions{IO: ios, ResolveModel: testModel, Lines: 10,
		Client: func(context.Context) (debugLogAPI, error) { return nil, errors.New("no client") }}); err == nil {
		t.Error("client error lost")
	}
}
