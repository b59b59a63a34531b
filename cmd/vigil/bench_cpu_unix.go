//go:build unix

package main

import (
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// processCPU is the user and system CPU this process has used so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// processPeakRSS is the most resident memory this process has had, in
// bytes.
func processPeakRSS() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss), nil // bytes there, KiB elsewhere
	}
	return int64(ru.Maxrss) * 1024, nil
}
