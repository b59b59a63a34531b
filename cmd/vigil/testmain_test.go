package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestMain lets the test binary stand in for the vigil binary: with
// VIGIL_TEST_AS_VIGIL=1 it runs its arguments as vigil would, so tests
// can run the lines "vigil sync crontab" writes, as cron would.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_TEST_AS_VIGIL") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// The server under test of "vigil bench ingest" is this binary again.
	benchChildEnv = []string{"VIGIL_TEST_AS_VIGIL=1"}
	os.Exit(m.Run())
}
