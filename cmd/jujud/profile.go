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
// stop is called, and a heap profile to $JUJUD_CPUPROFILE.heap.<pid> on each SIGUSR1.
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
