package opsgenie_test

import (
	"context"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/opsgenie"
)

// TestGolden renders a failure with output, a missed run and a stuck run
// as they are sent; go test -update rewrites testdata.
func TestGolden(t *testing.T) {
	t.Parallel()
	notifiertest.GoldenSamples(t, func(t *testing.T, url string, n *notifiers.Notification) error {
		return newNotifier(t, url, opsgenie.Config{APIKey: apiKey}).Notify(context.Background(), n)
	})
}

// TestMonitorEventsDoNotPage: Opsgenie pages, so monitor.undeclared and
// monitor.redeclared, news rather than alerts, and reports (report.weekly,
// report.monthly), summaries, are refused for good and
// nothing is sent (delivery never routes them here).
func TestMonitorEventsDoNotPage(t *testing.T) {
	t.Parallel()
	samples := notifiertest.MonitorEventSamples()
	maps.Copy(samples, notifiertest.ReportSamples()) // reports too
	for name, n := range samples {
		t.Run(name, func(t *testing.T) {
			recv := notifiertest.NewReceiver(t, nil)
			err := newNotifier(t, recv.URL, opsgenie.Config{APIKey: apiKey}).Notify(context.Background(), n)
			require.Error(t, err)
			require.True(t, notifiers.IsPermanent(err), "%v", err)
			require.ErrorContains(t, err, "which pages")
			require.Empty(t, recv.Requests())
		})
	}
}
