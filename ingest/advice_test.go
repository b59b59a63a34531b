package ingest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/monitors"
)

// TestAnswerCarriesAdvice: the answer to a ping of a monitor whose settings
// call for advice carries it, one Vigil-Warning header each, the same
// strings as the API's warnings; a monitor without advice gets none.
func TestAnswerCarriesAdvice(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		hourly := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"}
		advised := b.monitor(t, "hourly", func(m *monitors.Monitor) {
			m.Schedule = hourly
			m.GraceSeconds = 3600
			m.RetryPolicy = &monitors.RetryPolicy{Name: "hangfire-default", MaxRetries: 10,
				MaxDelaysSeconds: []int64{44, 74, 118, 212, 416, 814, 1514, 2648, 4372, 6866}}
		})
		fine := b.monitor(t, "fine", func(m *monitors.Monitor) { m.Schedule = hourly })

		var a monitors.Adviser
		want := monitors.AdviceStrings(a.Advise(advised, t0))
		require.Len(t, want, 2, "retry_policy and grace_seconds")
		for _, path := range []string{"/ping/" + advised.PingKey + "/start", "/ping/" + b.prj.PingKey + "/hourly/1"} {
			res := b.get(t, path)
			require.Equal(t, http.StatusOK, res.status, res.body)
			require.Equal(t, want, res.header.Values(ingest.WarningHeader), path)
		}
		res := b.get(t, "/ping/"+fine.PingKey)
		require.Equal(t, http.StatusOK, res.status)
		require.Empty(t, res.header.Values(ingest.WarningHeader))
		res = b.get(t, "/ping/00000000-0000-4000-8000-000000000000")
		require.Equal(t, http.StatusNotFound, res.status)
		require.Empty(t, res.header.Values(ingest.WarningHeader), "no monitor, no advice")
	})
}

// TestScheduledAtIsStored: a ping's scheduled_at reaches its history.
func TestScheduledAtIsStored(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		m := b.monitor(t, "hourly", func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"}
		})
		res := b.get(t, "/ping/"+m.PingKey+"/fail?attempt=2&retry_in=60&scheduled_at=2026-03-02T10:00:00%2B01:00")
		require.Equal(t, http.StatusOK, res.status, res.body)
		p := b.lastPing(t, m)
		require.NotNil(t, p.ScheduledAt)
		require.Equal(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), *p.ScheduledAt)
		require.Equal(t, time.UTC, p.ScheduledAt.Location())
		require.Equal(t, http.StatusOK, b.get(t, "/ping/"+m.PingKey).status)
		require.Nil(t, b.lastPing(t, m).ScheduledAt, "a ping without scheduled_at")
	})
}
