package ntfy_test

import (
	"context"
	"testing"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// TestGolden renders a failure with output, a missed run and a stuck run
// as they are sent; go test -update rewrites testdata.
func TestGolden(t *testing.T) {
	t.Parallel()
	notifiertest.GoldenSamples(t, func(t *testing.T, url string, n *notifiers.Notification) error {
		return newNotifier(t, url, "").Notify(context.Background(), n)
	})
}

// TestGoldenMonitorEvents renders the monitor events and a grouped message
// monitor.redeclared as they are sent; go test -update rewrites testdata.
func TestGoldenMonitorEvents(t *testing.T) {
	t.Parallel()
	notifiertest.GoldenMonitorEvents(t, func(t *testing.T, url string, n *notifiers.Notification) error {
		return newNotifier(t, url, "").Notify(context.Background(), n)
	})
}
