package web_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// server, a browser or a request left running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
