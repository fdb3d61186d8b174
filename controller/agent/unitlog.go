package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/core/modelconfig"
)

// unitLogFile is the unit's own log in its directory: hook output, juju-log messages and what
// the agent did.
const unitLogFile = "unit.log"

// maxPendingLogs bounds what a unit keeps while the controller cannot take its log; the oldest
// records go first, and the loss is reported once it can.
const maxPendingLogs = 10_000

// unitLog writes the unit's log to its file and ships it to the controller's model log
// (`juju debug-log`) in batches, so hook output never waits on the network.
type unitLog struct {
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
func (l *unitLog) setLoggingConfig(spec string) {
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
func (l *unitLog) enabled(level, module string) bool {
	l.mu.Lock()
	loggers := l.loggers
	l.mu.Unlock()
	if loggers == nil {
		return true
	}
	lv, ok := modelconfig.ParseLevel(level)
	return !ok || loggers.Enabled(module, lv)
}

func openUnitLog(dir, tag, model string, c *client.Client) (*unitLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, unitLogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening unit log: %w", err)
	}
	return &unitLog{tag: tag, model: model, c: c, file: f, wake: make(chan struct{}, 1)}, nil
}

// write records one line; level is TRACE, DEBUG, INFO, WARNING or ERROR.
func (l *unitLog) write(level, module, message string) {
	if !l.enabled(level, module) {
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
func (l *unitLog) ship(ctx context.Context) {
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

func (l *unitLog) flush(ctx context.Context) error {
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

func (l *unitLog) close() { l.file.Close() }
