// Package logsink keeps each model's log, the records agents write (hook output, juju-log), as
// JSON lines in <dir>/<model-uuid>.log, and hands new records to followers (juju debug-log).
//
// A log is rotated when it passes the size cap: the file becomes <uuid>.log.1 (replacing the
// previous one), so at most about twice the cap is kept per model.
//
// Followers never slow writers down: each has a bounded buffer, and when it is full new records
// are dropped for that follower and counted; as soon as there is room again the follower first
// receives a WARNING record from entity "controller", module "juju.logsink", saying how many were
// dropped. A follower that cannot keep up thus sees a gap, marked, rather than stalling the model.
//
// Each controller process keeps the log of the agents connected to it: with several replicas
// the log is split between them.
package logsink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Defaults.
const (
	DefaultMaxSize = 64 << 20
	DefaultLines   = 10
	DefaultBuffer  = 1000
)

// DroppedModule is the module of the marker a slow follower gets in place of dropped records.
const DroppedModule = "juju.logsink"

// Options tune a Sink; zero values take the defaults.
type Options struct {
	// MaxSize is the size past which a model's log is rotated.
	MaxSize int64
	// Buffer is how many records a follower may lag behind before records are dropped for it.
	Buffer int
	// Now stamps the dropped-records markers.
	Now func() time.Time
}

// Sink holds the logs of every model under one directory. It is safe for concurrent use.
type Sink struct {
	dir  string
	opts Options

	mu     sync.Mutex
	closed bool
	files  map[string]*openLog
	subs   map[string]map[*Subscription]struct{}
}

type openLog struct {
	f    *os.File
	size int64
}

// New opens (creating it, mode 0700) the log directory dir.
func New(dir string, opts Options) (*Sink, error) {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("securing log directory: %w", err)
	}
	return &Sink{dir: dir, opts: opts, files: map[string]*openLog{}, subs: map[string]map[*Subscription]struct{}{}}, nil
}

// Close closes the open logs and ends every follower (their channels close).
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for uuid, l := range s.files {
		errs = append(errs, l.f.Close())
		delete(s.files, uuid)
	}
	for uuid, subs := range s.subs {
		for sub := range subs {
			close(sub.ch)
		}
		delete(s.subs, uuid)
	}
	return errors.Join(errs...)
}

var errClosed = apierr.Errorf(apierr.Unavailable, "log sink closed")

// uuidRe keeps model UUIDs from naming files outside the directory.
var uuidRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

func (s *Sink) path(uuid string) (string, error) {
	if !uuidRe.MatchString(uuid) {
		return "", apierr.Errorf(apierr.NotValid, "model UUID %q not valid", uuid)
	}
	return filepath.Join(s.dir, uuid+".log"), nil
}

// stored is one line of a log file.
type stored struct {
	Time    int64  `json:"time"`
	Entity  string `json:"entity"`
	Module  string `json:"module,omitempty"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Append writes records to the model's log, in one write, then hands them to its followers.
func (s *Sink) Append(uuid string, records []*pb.LogRecord) error {
	path, err := s.path(uuid)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range records {
		if err := enc.Encode(stored{Time: r.GetTime(), Entity: r.GetEntity(), Module: r.GetModule(),
			Level: r.GetLevel(), Message: r.GetMessage()}); err != nil {
			return fmt.Errorf("encoding log record: %w", err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	l, err := s.open(uuid, path)
	if err != nil {
		return err
	}
	n, err := l.f.Write(buf.Bytes())
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing model log: %w", err)
	}
	if l.size >= s.opts.MaxSize {
		if err := s.rotate(uuid, path); err != nil {
			return err
		}
	}
	for sub := range s.subs[uuid] {
		for _, r := range records {
			sub.offer(r, s.opts.Now)
		}
	}
	return nil
}

// open returns the model's open log, opening it for appending (mode 0600) on first use.
// Called with s.mu held.
func (s *Sink) open(uuid, path string) (*openLog, error) {
	if l, ok := s.files[uuid]; ok {
		return l, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening model log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening model log: %w", err)
	}
	l := &openLog{f: f, size: fi.Size()}
	// A write torn by a crash leaves a partial last line: end it, so the next record starts a
	// line of its own instead of being lost with it.
	if l.size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, l.size-1); err == nil && last[0] != '\n' {
			n, _ := f.Write([]byte{'\n'})
			l.size += int64(n)
		}
	}
	s.files[uuid] = l
	return l, nil
}

// Models lists the models this sink holds a log of.
func (s *Sink) Models() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("listing model logs: %w", err)
	}
	var uuids []string
	for _, e := range entries {
		if uuid, ok := strings.CutSuffix(e.Name(), ".log"); ok && uuidRe.MatchString(uuid) {
			uuids = append(uuids, uuid)
		}
	}
	return uuids, nil
}

// Remove deletes a removed model's log (and its rotated part) and ends its followers.
func (s *Sink) Remove(uuid string) error {
	path, err := s.path(uuid)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if l, ok := s.files[uuid]; ok {
		errs = append(errs, l.f.Close())
		delete(s.files, uuid)
	}
	for sub := range s.subs[uuid] {
		close(sub.ch)
	}
	delete(s.subs, uuid)
	for _, p := range []string{path, path + ".1"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing model log: %w", err)
	}
	return nil
}

// rotate moves the log to <path>.1; the next Append starts a new file. Called with s.mu held.
func (s *Sink) rotate(uuid, path string) error {
	l := s.files[uuid]
	delete(s.files, uuid)
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotating model log: %w", err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return fmt.Errorf("rotating model log: %w", err)
	}
	return nil
}

// Read returns the model's backlog: every matching record when replay is set, else the last
// lines matching records (DefaultLines when lines <= 0). A model without a log has none.
func (s *Sink) Read(ctx context.Context, uuid string, f *Filter, replay bool, lines int) ([]*pb.LogRecord, error) {
	b, _, err := s.Tail(uuid, nil, false)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if replay {
		var out []*pb.LogRecord
		err := b.Each(ctx, f, func(r *pb.LogRecord) error { out = append(out, r); return nil })
		return out, err
	}
	return b.Last(ctx, f, lines)
}

// Follow delivers the model's matching records appended from now on, until the subscription is
// closed (or the sink is).
func (s *Sink) Follow(uuid string, f *Filter) (*Subscription, error) {
	if _, err := s.path(uuid); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	return s.subscribe(uuid, f), nil
}

// Tail takes the model's backlog and, when follow is set, subscribes to what comes after it, at
// one instant: no record is missed or seen twice between the two. f filters the subscription;
// the backlog is filtered as it is read. The caller closes both.
func (s *Sink) Tail(uuid string, f *Filter, follow bool) (*Backlog, *Subscription, error) {
	path, err := s.path(uuid)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errClosed
	}
	b := &Backlog{}
	// Open file descriptors keep what they read even if the log is rotated meanwhile; the sizes
	// taken now bound the backlog to what was written before the subscription.
	for _, p := range []string{path + ".1", path} {
		file, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			b.Close()
			return nil, nil, fmt.Errorf("reading model log: %w", err)
		}
		size := int64(0)
		if l, ok := s.files[uuid]; ok && p == path {
			size = l.size
		} else if fi, err := file.Stat(); err == nil {
			size = fi.Size()
		}
		b.files = append(b.files, section{f: file, size: size})
	}
	if !follow {
		return b, nil, nil
	}
	return b, s.subscribe(uuid, f), nil
}

// subscribe adds a follower. Called with s.mu held.
func (s *Sink) subscribe(uuid string, f *Filter) *Subscription {
	sub := &Subscription{sink: s, uuid: uuid, filter: f, ch: make(chan *pb.LogRecord, s.opts.Buffer)}
	if s.subs[uuid] == nil {
		s.subs[uuid] = map[*Subscription]struct{}{}
	}
	s.subs[uuid][sub] = struct{}{}
	return sub
}

// Subscription is a follower of one model's log.
type Subscription struct {
	sink    *Sink
	uuid    string
	filter  *Filter
	ch      chan *pb.LogRecord
	dropped int // guarded by sink.mu
}

// Records delivers the matching records in order; it is closed when the sink closes.
func (sub *Subscription) Records() <-chan *pb.LogRecord { return sub.ch }

// Close stops the delivery.
func (sub *Subscription) Close() {
	s := sub.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[sub.uuid][sub]; !ok {
		return
	}
	delete(s.subs[sub.uuid], sub)
	if len(s.subs[sub.uuid]) == 0 {
		delete(s.subs, sub.uuid)
	}
	close(sub.ch)
}

// offer hands r to the follower without blocking; see the package comment for what happens when
// it lags. Called with sink.mu held.
func (sub *Subscription) offer(r *pb.LogRecord, now func() time.Time) {
	if !sub.filter.Match(r) {
		return
	}
	if sub.dropped > 0 {
		marker := &pb.LogRecord{
			Time: now().UnixNano(), Entity: "controller", Module: DroppedModule, Level: Warning.String(),
			Message: fmt.Sprintf("%d log records dropped: reader too slow", sub.dropped),
		}
		select {
		case sub.ch <- marker:
			sub.dropped = 0
		default:
			sub.dropped++
			return
		}
	}
	select {
	case sub.ch <- r:
	default:
		sub.dropped++
	}
}

// Backlog is a model's log as of one instant, read lazily.
type Backlog struct {
	files []section // oldest first
}

type section struct {
	f    *os.File
	size int64
}

// Close releases the files.
func (b *Backlog) Close() {
	for _, s := range b.files {
		s.f.Close()
	}
	b.files = nil
}

// Each calls fn with every matching record, oldest first, stopping at fn's first error.
// Lines that do not decode (a write torn by a crash) are skipped.
func (b *Backlog) Each(ctx context.Context, f *Filter, fn func(*pb.LogRecord) error) error {
	for _, s := range b.files {
		rd := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.size), 64<<10)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				if r, ok := decode(line); ok && f.Match(r) {
					if err := fn(r); err != nil {
						return err
					}
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("reading model log: %w", err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Last returns the last n matching records (DefaultLines when n <= 0), oldest first. It reads
// the files from their end, so its cost follows n, not the size of the log.
func (b *Backlog) Last(ctx context.Context, f *Filter, n int) ([]*pb.LogRecord, error) {
	if n <= 0 {
		n = DefaultLines
	}
	var out []*pb.LogRecord
	for i := len(b.files) - 1; i >= 0 && len(out) < n; i-- {
		err := eachLineBackward(b.files[i].f, b.files[i].size, func(line []byte) bool {
			if r, ok := decode(line); ok && f.Match(r) {
				out = append(out, r)
			}
			return len(out) < n && ctx.Err() == nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading model log: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	slices.Reverse(out)
	return out, nil
}

func decode(line []byte) (*pb.LogRecord, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	var st stored
	if err := json.Unmarshal(line, &st); err != nil {
		return nil, false
	}
	return &pb.LogRecord{Time: st.Time, Entity: st.Entity, Module: st.Module, Level: st.Level, Message: st.Message}, true
}

// eachLineBackward calls fn with the lines of r[0:size], last first, until fn returns false.
// The line passed is only valid during the call.
func eachLineBackward(r io.ReaderAt, size int64, fn func([]byte) bool) error {
	const chunk = 64 << 10
	var tail []byte // the start of the line being assembled, carried to the next (earlier) chunk
	pos := size
	for pos > 0 {
		// Reading at least as much as the carried part keeps long lines from costing quadratic copies.
		n := min(max(int64(chunk), int64(len(tail))), pos)
		pos -= n
		buf := make([]byte, n, n+int64(len(tail)))
		if _, err := r.ReadAt(buf, pos); err != nil && err != io.EOF {
			return err
		}
		buf = append(buf, tail...)
		for {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if line := buf[i+1:]; len(line) > 0 && !fn(line) {
				return nil
			}
			buf = buf[:i]
		}
		tail = buf
	}
	if len(tail) > 0 {
		fn(tail)
	}
	return nil
}
