package logsink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

const uuid = "d32b3c4e-0000-4000-8000-000000000001"

func rec(i int, entity, level string) *pb.LogRecord {
	return &pb.LogRecord{Time: int64(i), Entity: entity, Module: "unit." + entity + ".juju-log", Level: level, Message: fmt.Sprintf("m%d", i)}
}

func newSink(t *testing.T, opts Options) (*Sink, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	s, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func messages(rs []*pb.LogRecord) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.GetMessage())
	}
	return strings.Join(out, " ")
}

func appendN(t *testing.T, s *Sink, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := s.Append(uuid, []*pb.LogRecord{rec(i, "unit-mysql-0", "INFO")}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendReadAndModes(t *testing.T) {
	s, dir := newSink(t, Options{})
	appendN(t, s, 0, 15)
	ctx := context.Background()

	got, err := s.Read(ctx, uuid, nil, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "m5 m6 m7 m8 m9 m10 m11 m12 m13 m14"; messages(got) != want {
		t.Errorf("default backlog = %q, want %q", messages(got), want)
	}
	if got, _ := s.Read(ctx, uuid, nil, false, 3); messages(got) != "m12 m13 m14" {
		t.Errorf("last 3 = %q", messages(got))
	}
	if got, _ := s.Read(ctx, uuid, nil, true, 3); len(got) != 15 || got[0].GetMessage() != "m0" {
		t.Errorf("replay = %q", messages(got))
	}
	// Every field survives the file.
	if got[0].GetTime() != 5 || got[0].GetEntity() != "unit-mysql-0" || got[0].GetModule() != "unit.unit-mysql-0.juju-log" || got[0].GetLevel() != "INFO" {
		t.Errorf("record = %v", got[0])
	}
	if got, err := s.Read(ctx, "other-model", nil, true, 0); err != nil || len(got) != 0 {
		t.Errorf("model without log: %v %v", got, err)
	}

	// Data directory 0700, files 0600 (design: secrets and logs are the controller's alone).
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, uuid+".log")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v %v", fi.Mode(), err)
	}
}

func TestBadModelUUID(t *testing.T) {
	s, _ := newSink(t, Options{})
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := s.Append(bad, []*pb.LogRecord{rec(0, "x", "INFO")}); !errors.Is(err, apierr.NotValid) {
			t.Errorf("Append(%q) = %v", bad, err)
		}
		if _, err := s.Follow(bad, nil); !errors.Is(err, apierr.NotValid) {
			t.Errorf("Follow(%q) = %v", bad, err)
		}
	}
}

func TestRotation(t *testing.T) {
	// Each record is about 100 bytes: a cap of 1000 rotates every ten or so.
	s, dir := newSink(t, Options{MaxSize: 1000})
	appendN(t, s, 0, 35)
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, uuid+".log.1")); err != nil {
		t.Fatalf("no rotated file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, uuid+".log.2")); err == nil {
		t.Fatal("more than one rotated file kept")
	}
	all, err := s.Read(ctx, uuid, nil, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Only the current file and one rotated one are kept; they end with the newest record and
	// hold no gap.
	if len(all) < 10 || all[len(all)-1].GetMessage() != "m34" {
		t.Fatalf("replay after rotation = %q", messages(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].GetTime() != all[i-1].GetTime()+1 {
			t.Fatalf("gap in replay: %q", messages(all))
		}
	}
	// The last n span both files.
	last, err := s.Read(ctx, uuid, nil, false, len(all))
	if err != nil || messages(last) != messages(all) {
		t.Errorf("last %d = %q, %v", len(all), messages(last), err)
	}
	// The rotated file is 0600 too.
	if fi, err := os.Stat(filepath.Join(dir, uuid+".log.1")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rotated mode = %v %v", fi.Mode(), err)
	}
}

// A removed model's log goes, rotated part included, and its followers end; other models' stay.
func TestRemoveModelLog(t *testing.T) {
	s, dir := newSink(t, Options{MaxSize: 1000})
	appendN(t, s, 0, 15)
	if err := s.Append("other-model", []*pb.LogRecord{rec(0, "x", "INFO")}); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Follow(uuid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(uuid); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{uuid + ".log", uuid + ".log.1"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Remove: %v", f, err)
		}
	}
	if _, ok := <-sub.Records(); ok {
		t.Error("follower of a removed model still open")
	}
	sub.Close() // after Remove is harmless
	if _, err := os.Stat(filepath.Join(dir, "other-model.log")); err != nil {
		t.Errorf("other model's log: %v", err)
	}
	if err := s.Remove(uuid); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if err := s.Remove("../x"); !errors.Is(err, apierr.NotValid) {
		t.Errorf("Remove of a bad uuid = %v", err)
	}
}

func TestReadFilters(t *testing.T) {
	s, _ := newSink(t, Options{})
	if err := s.Append(uuid, []*pb.LogRecord{
		rec(0, "unit-mysql-0", "DEBUG"), rec(1, "unit-wordpress-0", "ERROR"), rec(2, "unit-mysql-1", "INFO"),
		rec(3, "machine-1", "WARNING"), rec(4, "unit-mysql-0", "INFO"),
	}); err != nil {
		t.Fatal(err)
	}
	f, err := NewFilter([]string{"mysql"}, []string{"mysql/1"}, nil, nil, "info")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(context.Background(), uuid, f, false, 5)
	if err != nil || messages(got) != "m4" {
		t.Errorf("filtered = %q %v", messages(got), err)
	}
	// The last n count matching records only.
	f, _ = NewFilter([]string{"mysql/0", "machine-1"}, nil, nil, nil, "")
	if got, _ := s.Read(context.Background(), uuid, f, false, 2); messages(got) != "m3 m4" {
		t.Errorf("last 2 matching = %q", messages(got))
	}
}

func TestTailNeitherMissesNorRepeats(t *testing.T) {
	s, _ := newSink(t, Options{})
	appendN(t, s, 0, 5)
	b, sub, err := s.Tail(uuid, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	defer b.Close()
	// Written after Tail: only the subscription has it, even though the file grew before the
	// backlog is read.
	appendN(t, s, 5, 7)
	backlog, err := b.Last(context.Background(), nil, 100)
	if err != nil || messages(backlog) != "m0 m1 m2 m3 m4" {
		t.Fatalf("backlog = %q %v", messages(backlog), err)
	}
	for _, want := range []string{"m5", "m6"} {
		select {
		case r := <-sub.Records():
			if r.GetMessage() != want {
				t.Fatalf("followed %q, want %q", r.GetMessage(), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s", want)
		}
	}
}

func TestFollowFiltersAndCloses(t *testing.T) {
	s, _ := newSink(t, Options{})
	f, _ := NewFilter(nil, nil, []string{"unit.unit-mysql-0"}, nil, "WARNING")
	sub, err := s.Follow(uuid, f)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Follow("other-model", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(uuid, []*pb.LogRecord{rec(0, "unit-mysql-0", "INFO"), rec(1, "unit-mysql-1", "ERROR"), rec(2, "unit-mysql-0", "ERROR")}); err != nil {
		t.Fatal(err)
	}
	if r := <-sub.Records(); r.GetMessage() != "m2" {
		t.Errorf("followed %v", r)
	}
	select {
	case r := <-other.Records():
		t.Errorf("other model's follower got %v", r)
	default:
	}
	sub.Close()
	sub.Close() // twice is harmless
	if _, ok := <-sub.Records(); ok {
		t.Error("closed subscription still delivers")
	}
	s.Close()
	if _, ok := <-other.Records(); ok {
		t.Error("closing the sink left a follower open")
	}
	if err := s.Append(uuid, []*pb.LogRecord{rec(3, "x", "INFO")}); !errors.Is(err, apierr.Unavailable) {
		t.Errorf("append after close = %v", err)
	}
}

// A follower that does not read never blocks writers: records beyond its buffer are dropped and
// a marker says how many once there is room.
func TestSlowFollowerDropsWithMarker(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, _ := newSink(t, Options{Buffer: 3, Now: func() time.Time { return now }})
	sub, err := s.Follow(uuid, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	done := make(chan struct{})
	go func() { appendN(t, s, 0, 10); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("writer blocked by a slow follower")
	}
	var got []string
	for range 3 {
		got = append(got, (<-sub.Records()).GetMessage())
	}
	if strings.Join(got, " ") != "m0 m1 m2" {
		t.Fatalf("buffered = %q", got)
	}
	appendN(t, s, 10, 11)
	marker := <-sub.Records()
	if marker.GetMessage() != "7 log records dropped: reader too slow" || marker.GetLevel() != "WARNING" ||
		marker.GetModule() != DroppedModule || marker.GetTime() != now.UnixNano() {
		t.Errorf("marker = %v", marker)
	}
	if r := <-sub.Records(); r.GetMessage() != "m10" {
		t.Errorf("after marker = %v", r)
	}
}

func TestEachLineBackward(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than a chunk
	for _, text := range []string{"a\nb\nc\n", "a\nb\nc", "\n\na\n" + long + "\nc\n", ""} {
		var got []string
		if err := eachLineBackward(strings.NewReader(text), int64(len(text)), func(l []byte) bool {
			got = append(got, string(l))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range strings.Split(text, "\n") {
			if l != "" {
				want = append([]string{l}, want...)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("lines of %.20q: got %d lines, want %d", text, len(got), len(want))
		}
	}
	// Stopping early.
	n := 0
	eachLineBackward(strings.NewReader("a\nb\nc\n"), 6, func([]byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("did not stop: %d calls", n)
	}
}

func TestTornLinesSkipped(t *testing.T) {
	s, dir := newSink(t, Options{})
	appendN(t, s, 0, 2)
	s.Close()
	path := filepath.Join(dir, uuid+".log")
	data, _ := os.ReadFile(path)
	data = append(data, []byte(`{"time":9,"entity":"unit-mysql-0","mess`)...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	appendN(t, s2, 2, 3)
	for _, replay := range []bool{true, false} {
		got, err := s2.Read(context.Background(), uuid, nil, replay, 10)
		if err != nil || messages(got) != "m0 m1 m2" {
			t.Errorf("replay=%v: %q %v", replay, messages(got), err)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	tests := []struct {
		include, exclude []string
		entity           string
		want             bool
	}{
		{nil, nil, "unit-mysql-0", true},
		{[]string{"mysql/0"}, nil, "unit-mysql-0", true},
		{[]string{"mysql/0"}, nil, "unit-mysql-1", false},
		{[]string{"unit-mysql-0"}, nil, "unit-mysql-0", true},
		{[]string{"mysql"}, nil, "unit-mysql-7", true},
		{[]string{"mysql"}, nil, "unit-mysql-router-0", false}, // an application is not a prefix
		{[]string{"mysql*"}, nil, "unit-mysql-router-0", true},
		{[]string{"mysql/*"}, nil, "unit-mysql-3", true},
		{[]string{"machine-1"}, nil, "machine-1", true},
		{[]string{"1"}, nil, "machine-1", true},
		{[]string{"1"}, nil, "machine-10", false},
		{[]string{"0/lxd/1"}, nil, "machine-0-lxd-1", true},
		{[]string{"0/lxd/*"}, nil, "machine-0-lxd-3", true},
		{[]string{"1"}, nil, "unit-mysql-1", false},
		{[]string{"unit-*"}, nil, "machine-0", false},
		{[]string{"*"}, nil, "controller", true},
		{nil, []string{"mysql"}, "unit-mysql-0", false},
		{nil, []string{"mysql"}, "unit-wordpress-0", true},
		{[]string{"mysql", "wordpress"}, []string{"wordpress/1"}, "unit-wordpress-1", false},
		{[]string{"mysql", "wordpress"}, []string{"wordpress/1"}, "unit-wordpress-0", true},
	}
	for _, tt := range tests {
		f, err := NewFilter(tt.include, tt.exclude, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(&pb.LogRecord{Entity: tt.entity}); got != tt.want {
			t.Errorf("include %v exclude %v on %s = %v, want %v", tt.include, tt.exclude, tt.entity, got, tt.want)
		}
	}
}

func TestFilterModulesAndLevels(t *testing.T) {
	f, err := NewFilter(nil, nil, []string{"unit.mysql/0", "juju.worker"}, []string{"juju.worker.uniter.relation"}, "warning")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		module, level string
		want          bool
	}{
		{"unit.mysql/0.juju-log", "WARNING", true},
		{"unit.mysql/0.juju-log", "INFO", false},
		{"unit.mysql/0.install", "CRITICAL", true},
		{"juju.worker.uniter", "ERROR", true},
		{"juju.worker.uniter.relation", "ERROR", false},
		{"unit.mysql/1.juju-log", "ERROR", false},
		{"unit.mysql/0.juju-log", "bogus", false},
	}
	for _, tt := range tests {
		if got := f.Match(&pb.LogRecord{Module: tt.module, Level: tt.level}); got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.module, tt.level, got, tt.want)
		}
	}
	for _, bad := range [][]string{{"Mysql"}, {"my sql"}, {"a;b"}} {
		if _, err := NewFilter(bad, nil, nil, nil, ""); !errors.Is(err, apierr.NotValid) {
			t.Errorf("pattern %q: %v", bad, err)
		}
	}
	if _, err := NewFilter(nil, nil, nil, nil, "loud"); !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), `level "loud" not valid`) {
		t.Errorf("bad level: %v", err)
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"trace": Trace, "DEBUG": Debug, "Info": Info, "warn": Warning, "WARNING": Warning, "error": Error, "critical": Critical} {
		if got, ok := ParseLevel(in); !ok || got != want {
			t.Errorf("ParseLevel(%q) = %v %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "loud", "NONE"} {
		if _, ok := ParseLevel(bad); ok {
			t.Errorf("ParseLevel(%q) ok", bad)
		}
	}
	if Trace >= Debug || Warning >= Error || Critical.String() != "CRITICAL" {
		t.Error("levels out of order")
	}
}
