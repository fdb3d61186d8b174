package agent

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/core/modelconfig"
)

// maxPendingLogs bounds what an agent keeps while the controller cannot take its log; the oldest
// records go first, and the loss is reported once it can.
const maxPendingLogs = 10_000

// agentLog writes an agent's log to its file and ships it to the controller's model log
// (`juju debug-log`) in batches under the agent's own tag, so that neither hook output nor the
// agent's work ever waits on the network. Unit agents and machine agents each keep one.
type agentLog struct {
	tag, model string
	c          *client.Client
	file       *os.File

	mu      sync.Mutex
	pending []*pb.LogRecord
	dropped int
	wake    chan struct{}
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
	if loggers, err := modelconfig.ParseLoggingConfig(spec); err == nil {
		l.spec, l.loggers = spec, loggers
	}
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
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening agent log: %w", err)
	}
	return &agentLog{tag: tag, model: model, c: c, file: f, wake: make(chan struct{}, 1)}, nil
}

// shipUntilStopped ships the log in the background; stop ends it, after a brief last try to
// send what is pending, and closes the file.
func (l *agentLog) shipUntilStopped(ctx context.Context) (stop func()) {
	shipCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	shipped := make(chan struct{})
	go func() { l.ship(shipCtx); close(shipped) }()
	return func() { cancel(); <-shipped; l.close() }
}

// write records one line; level is TRACE, DEBUG, INFO, WARNING or ERROR.
// A nil log writes nothing (a deployer whose agent keeps no log).
func (l *agentLog) write(level, module, message string) {
	if l == nil || !l.enabled(level, module) {
		return
	}
	now := time.Now()
	fmt.Fprintf(l.file, "%s %s %s %s\n", now.UTC().Format("2006-01-02 15:04:05.000"), level, module, message)
	l.mu.Lock()
	if len(l.pending) >= maxPendingLogs {
		l.pending = l.pending[1:]
		l.dropped++
	}
	l.pending = append(l.pending, &pb.LogRecord{Time: now.UnixNano(), Entity: l.tag, Module: module, Level: level, Message: message})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// ship sends pending records until ctx ends, then tries once more briefly.
func (l *agentLog) ship(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			l.flush(fctx)
			cancel()
			return
		case <-l.wake:
		}
		// Gather what else comes within a moment into the same call.
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
		if l.flush(ctx) != nil {
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
			select {
			case l.wake <- struct{}{}:
			default:
			}
			continue
		}
		backoff = 100 * time.Millisecond
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

func (l *agentLog) close() { l.file.Close() }
