package email_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// TestGolden renders a failure with output, a missed run and a stuck run,
// in plain text and HTML; go test -update rewrites testdata.
func TestGolden(t *testing.T) {
	t.Parallel()
	for name, n := range notifiertest.Samples() {
		text, html, err := email.Render(n)
		require.NoError(t, err)
		notifiertest.Golden(t, name+".txt", []byte(text))
		notifiertest.Golden(t, name+".html", []byte(html))
	}
}

// TestGoldenMonitorEvents renders the monitor events and a grouped message
// monitor.redeclared in plain text and HTML; go test -update rewrites
// testdata.
func TestGoldenMonitorEvents(t *testing.T) {
	t.Parallel()
	for name, n := range notifiertest.MonitorEventSamples() {
		text, html, err := email.Render(n)
		require.NoError(t, err)
		notifiertest.Golden(t, name+".txt", []byte(text))
		notifiertest.Golden(t, name+".html", []byte(html))
	}
}

// TestGoldenReports renders report.weekly and report.monthly in plain
// text and HTML; go test -update rewrites testdata.
func TestGoldenReports(t *testing.T) {
	t.Parallel()
	for name, n := range notifiertest.ReportSamples() {
		text, html, err := email.Render(n)
		require.NoError(t, err)
		notifiertest.Golden(t, name+".txt", []byte(text))
		notifiertest.Golden(t, name+".html", []byte(html))
	}
}
