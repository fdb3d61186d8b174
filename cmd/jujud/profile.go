package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// startProfile is a developer's tool for the scale figures (`make bench-scale`): when
// $JUJUD_CPUPROFILE is set, this process writes a CPU profile to $JUJUD_CPUPROFILE.<pid> until
// stop is called, and on each SIGUSR1 a heap profile to $JUJUD_CPUPROFILE.heap.<pid> and its
// goroutines to $JUJUD_CPUPROFILE.goroutine.<pid> (counted by stack: what each unit costs),
// and the runtime's memory figures to $JUJUD_CPUPROFILE.mem.<pid> (heap against stacks).
func startProfile() (stop func()) {
	base := os.Getenv("JUJUD_CPUPROFILE")
	if base == "" {
		return func() {}
	}
	heap := make(chan os.Signal, 1)
	signal.Notify(heap, syscall.SIGUSR1)
	go func() {
		for range heap {
			runtime.GC()
			if f, err := os.Create(fmt.Sprintf("%s.heap.%d", base, os.Getpid())); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mem := fmt.Sprintf("HeapAlloc %d\nHeapInuse %d\nHeapIdle %d\nHeapReleased %d\nHeapSys %d\nStackInuse %d\nStackSys %d\nSys %d\nGoroutines %d\nNumGC %d\n",
				m.HeapAlloc, m.HeapInuse, m.HeapIdle, m.HeapReleased, m.HeapSys, m.StackInuse, m.StackSys, m.Sys, runtime.NumGoroutine(), m.NumGC)
			_ = os.WriteFile(fmt.Sprintf("%s.mem.%d", base, os.Getpid()), []byte(mem), 0o644)
			if f, err := os.Create(fmt.Sprintf("%s.goroutine.%d", base, os.Getpid())); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
		}
	}()
	f, err := os.Create(fmt.Sprintf("%s.%d", base, os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "WARNING cannot write the CPU profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "WARNING cannot start the CPU profile:", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
