package agent

import (
	"container/list"
	"os"
	"sync"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// maxOpenLogs bounds the log files the process keeps open: the agents writing now (hooks
// running, units deploying), never one per agent. It is above the agents working at once
// (maxBusyAgents): at 16, the 64 agents of a big deploy took turns with the files, and each
// unit's machine.log and unit.log were opened five or six times (issue 16).
const maxOpenLogs = 2 * maxBusyAgents

// sharedLogs writes every agent log file of the process.
var sharedLogs = newLogFiles(maxOpenLogs)

// logFiles appends lines to files, keeping the most recently written few open (least
// recently used first to close), so that a thousand idle agents hold no descriptor while a
// busy one does not reopen its file for every line. One lock orders the lines of every file:
// a line is one append, cheap beside what produced it. Files are opened by atomicfile.Open:
// os.OpenFile would try each on the runtime's poller (five system calls more for every open,
// and the agent host opens a file per agent it starts).
type logFiles struct {
	max  int
	mu   sync.Mutex
	open map[string]*list.Element // of *openLog, in lru
	lru  list.List                // front: the most recently written
}

type openLog struct {
	path string
	f    *os.File
}

func newLogFiles(maxOpen int) *logFiles {
	return &logFiles{max: max(maxOpen, 1), open: map[string]*list.Element{}}
}

// touch opens path (creating it), reporting an error where write would silently lose lines.
func (w *logFiles) touch(path string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.file(path)
	return err
}

// write appends line to path; a file that cannot be opened loses the line (the controller's
// copy, shipped apart, still has it).
func (w *logFiles) write(path string, line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := w.file(path)
	if err != nil {
		return
	}
	if _, err := f.Write(line); err != nil {
		w.closeLocked(path) // a fresh open next time (the file may have been replaced)
	}
}

// forget closes path if it is open: its agent stopped (and its directory may go).
func (w *logFiles) forget(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked(path)
}

// openCount is how many files are open now.
func (w *logFiles) openCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.open)
}

func (w *logFiles) file(path string) (*os.File, error) {
	if e, ok := w.open[path]; ok {
		w.lru.MoveToFront(e)
		return e.Value.(*openLog).f, nil
	}
	f, err := atomicfile.Open(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	for len(w.open) >= w.max {
		w.closeLocked(w.lru.Back().Value.(*openLog).path)
	}
	w.open[path] = w.lru.PushFront(&openLog{path: path, f: f})
	return f, nil
}

func (w *logFiles) closeLocked(path string) {
	e, ok := w.open[path]
	if !ok {
		return
	}
	w.lru.Remove(e)
	delete(w.open, path)
	_ = e.Value.(*openLog).f.Close()
}
