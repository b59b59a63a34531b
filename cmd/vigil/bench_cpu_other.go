//go:build !unix

package main

import (
	"errors"
	"time"
)

// processCPU is the CPU this process has used so far: not measured here.
func processCPU() (time.Duration, error) {
	return 0, errors.New("process CPU is measured on Unix only")
}

// processPeakRSS is the most resident memory this process has had: not
// measured here.
func processPeakRSS() (int64, error) {
	return 0, errors.New("peak RSS is measured on Unix only")
}
