package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/core/modelconfig"
)

// maxPendingLogs bounds what an agent keeps while the controller cannot take its log; the oldest
// records go first, and the loss is reported once it can.
const maxPendingLogs = 10_000

// shipGather is how long a shipper waits for more records before it sends, unless its agent
// goes idle first (agentLog.idle): what an agent logs in one pass of its work goes in one call.
// A machine agent's deploy writes three lines over a second or more under load (3.4 s at
// 10,000 units), which a fixed 50 ms shipped in three calls and 500 ms in two (issue 16: a
// fifth of the agents' calls at deploy). debug-log shows a line of a long hook that much later.
const shipGather = 2 * time.Second

// agentLog writes an agent's log to its file and ships it to the controller's model log
// (`juju debug-log`) in batches under the agent's own tag, so that neither hook output nor the
// agent's work ever waits on the network. Unit agents and machine agents each keep one.
//
// An idle agent costs its log neither a descriptor nor a goroutine (issue 16: 9,988 idle units
// ran the agent host out of descriptors): the file is written through the process's shared
// logFiles, and the shipper runs only while records wait to be shipped.
type agentLog struct {
	tag, model string
	c          logSender // nil: the file only
	path       string
	// gather is how long a shipper waits for more (shipGather).
	gather time.Duration

	// idled wakes the shipper: the agent has nothing more to do for now.
	idled chan struct{}

	mu      sync.Mutex
	pending []*pb.LogRecord
	dropped int
	// shipCtx is the context shippers run in (nil until shipUntilStopped: nothing is shipped);
	// shipping says one runs; stopped: no shipper starts again.
	shipCtx  context.Context
	shipping bool
	stopped  bool
	shippers sync.WaitGroup
	// spec and loggers are the model's logging-config and its parse: records below their
	// logger's level are not written (nil until the agent has read the model: everything is).
	spec    string
	loggers modelconfig.Loggers
}

// setLoggingConfig applies the model's logging-config; a spec that does not parse (it was
// checked when set) leaves the levels as they were.
func (l *agentLog) setLoggingConfig(spec string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if spec == l.spec && l.loggers != nil {
		return
	}
	if loggers, err := parsedLoggingConfig(spec); err == nil {
		l.spec, l.loggers = spec, loggers
	}
}

// parsedLoggingConfigs holds the parse of each logging-config seen, shared by every agent of
// the process (read only): a parse per agent was 5 MB of the agent host's heap at 10,000
// units. A model's logging-config changes rarely; the cache starts over past a few dozen.
var parsedLoggingConfigs = struct {
	sync.Mutex
	m map[string]modelconfig.Loggers
}{m: map[string]modelconfig.Loggers{}}

func parsedLoggingConfig(spec string) (modelconfig.Loggers, error) {
	c := &parsedLoggingConfigs
	c.Lock()
	defer c.Unlock()
	if loggers, ok := c.m[spec]; ok {
		return loggers, nil
	}
	loggers, err := modelconfig.ParseLoggingConfig(spec)
	if err != nil {
		return nil, err
	}
	if len(c.m) >= 64 {
		clear(c.m)
	}
	c.m[spec] = loggers
	return loggers, nil
}

// enabled: a record of module at level passes the model's logging-config.
func (l *agentLog) enabled(level, module string) bool {
	l.mu.Lock()
	loggers := l.loggers
	l.mu.Unlock()
	if loggers == nil {
		return true
	}
	lv, ok := modelconfig.ParseLevel(level)
	return !ok || loggers.Enabled(module, lv)
}

// openAgentLog opens (appending) the log file at path of the agent tag in model; c ships its
// records (nil: the file only, as in tests that ship nothing).
func openAgentLog(path, tag, model string, c *client.Client) (*agentLog, error) {
	if c == nil {
		return openAgentLogTo(path, tag, model, nil)
	}
	return openAgentLogTo(path, tag, model, c)
}

// logSender is what an agent log ships its records with.
type logSender interface {
	WriteLogs(ctx context.Context, model string, records []*pb.LogRecord) error
}

func openAgentLogTo(path, tag, model string, c logSender) (*agentLog, error) {
	if err := sharedLogs.touch(path); err != nil {
		return nil, fmt.Errorf("opening agent log: %w", err)
	}
	return &agentLog{tag: tag, model: model, c: c, path: path, gather: shipGather, idled: make(chan struct{}, 1)}, nil
}

// idle says the agent has done what was due: what it logged meanwhile may go now.
func (l *agentLog) idle() {
	if l == nil {
		return
	}
	l.mu.Lock()
	shipping := l.shipping
	l.mu.Unlock()
	if !shipping {
		return // nothing waits: no word for a shipper yet to come
	}
	select {
	case l.idled <- struct{}{}:
	default:
	}
}

// shipUntilStopped ships the log in the background, a shipper running while records wait; stop
// ends it, after a brief last try to send what is pending, and closes the file.
func (l *agentLog) shipUntilStopped(ctx context.Context) (stop func()) {
	shipCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.mu.Lock()
	l.shipCtx = shipCtx
	l.startShipperLocked()
	l.mu.Unlock()
	return func() {
		cancel()
		l.mu.Lock()
		l.stopped = true
		l.mu.Unlock()
		l.shippers.Wait()
		if l.c != nil {
			// Records written after the last shipper ended (it found nothing, then they came).
			fctx, cancelFlush := context.WithTimeout(context.Background(), 2*time.Second)
			_ = l.flush(fctx)
			cancelFlush()
		}
		l.close()
	}
}

// startShipperLocked starts a shipper when records wait and none runs (l.mu held).
func (l *agentLog) startShipperLocked() {
	if l.c == nil || l.shipCtx == nil || l.stopped || l.shipping || (len(l.pending) == 0 && l.dropped == 0) {
		return
	}
	l.shipping = true
	select {
	case <-l.idled: // meant for the last shipper
	default:
	}
	ctx := l.shipCtx
	l.shippers.Go(func() { l.ship(ctx) })
}

// write records one line; level is TRACE, DEBUG, INFO, WARNING or ERROR.
// A nil log writes nothing (a deployer whose agent keeps no log).
func (l *agentLog) write(level, module, message string) {
	if l == nil || !l.enabled(level, module) {
		return
	}
	now := time.Now()
	sharedLogs.write(l.path, fmt.Appendf(nil, "%s %s %s %s\n", now.UTC().Format("2006-01-02 15:04:05.000"), level, module, message))
	l.mu.Lock()
	if len(l.pending) >= maxPendingLogs {
		l.pending = l.pending[1:]
		l.dropped++
	}
	l.pending = append(l.pending, &pb.LogRecord{Time: now.UnixNano(), Entity: l.tag, Module: module, Level: level, Message: message})
	l.startShipperLocked()
	l.mu.Unlock()
}

// ship sends pending records until none is left (then it ends: an idle agent has no shipper)
// or ctx ends, when it tries once more briefly.
func (l *agentLog) ship(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		// Gather what else the agent logs before it goes idle into the same call.
		gather := time.NewTimer(l.gather)
		select {
		case <-ctx.Done():
		case <-l.idled:
		case <-gather.C:
		}
		gather.Stop()
		if ctx.Err() != nil {
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = l.flush(fctx)
			cancel()
			l.mu.Lock()
			l.shipping = false
			l.mu.Unlock()
			return
		}
		if l.flush(ctx) != nil {
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		l.mu.Lock()
		if len(l.pending) == 0 && l.dropped == 0 {
			l.shipping = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

func (l *agentLog) flush(ctx context.Context) error {
	l.mu.Lock()
	batch, dropped := l.pending, l.dropped
	l.pending, l.dropped = nil, 0
	l.mu.Unlock()
	if dropped > 0 {
		batch = append([]*pb.LogRecord{{Time: time.Now().UnixNano(), Entity: l.tag, Module: "juju.agent",
			Level: "WARNING", Message: fmt.Sprintf("%d log records lost while the controller was unreachable", dropped)}}, batch...)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := l.c.WriteLogs(ctx, l.model, batch); err != nil {
		l.mu.Lock()
		l.pending = append(batch, l.pending...)
		if over := len(l.pending) - maxPendingLogs; over > 0 {
			l.pending = l.pending[over:]
			l.dropped += over
		}
		l.mu.Unlock()
		return err
	}
	return nil
}

// close lets the file go from the shared writer's open files.
func (l *agentLog) close() { sharedLogs.forget(l.path) }
