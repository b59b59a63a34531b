package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

// TestUptime reads the uptime of a nightly job at 01:00 America/New_York
// over the day clocks go back (2026-11-01, 25 hours): Saturday's run
// succeeds in 45 s; Sunday's fails for good at 01:00:10 EDT, and its
// failed incident is still open at noon EST, 11h59m50s later.
func TestUptime(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		m := b.createMonitor(map[string]any{"name": "nightly",
			"schedule": map[string]any{"kind": "cron", "expr": "0 1 * * *", "tz": "America/New_York"}})
		sat := time.Date(2026, 10, 31, 1, 0, 0, 0, ny)
		sun := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC) // 01:00 EDT, the first of two
		b.ping(m.PingKey, monitors.PingStart, sat)
		b.ping(m.PingKey, monitors.PingSuccess, sat.Add(45*time.Second))
		b.ping(m.PingKey, monitors.PingStart, sun)
		b.ping(m.PingKey, monitors.PingFail, sun.Add(10*time.Second))
		b.clock.Set(time.Date(2026, 11, 1, 12, 0, 0, 0, ny))

		r := b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/uptime?days=2", b.ro, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var u api.Uptime
		r.json(t, &u)
		require.Equal(t, "America/New_York", u.TZ)
		require.Len(t, u.Days, 2)
		d0, d1 := u.Days[0], u.Days[1]
		require.Equal(t, "2026-10-31", d0.Date)
		require.Equal(t, 1, d0.Occurrences)
		require.Equal(t, 1, d0.OnTime)
		require.Equal(t, 1.0, *d0.Uptime)
		require.Equal(t, int64(45000), *d0.RunP50MS)
		require.Equal(t, int64(45000), *d0.RunP95MS)
		require.Equal(t, "2026-11-01", d1.Date)
		require.Equal(t, 25*time.Hour, d1.End.Sub(d1.Start))
		require.Equal(t, time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC), d1.Start.UTC())
		require.Equal(t, 1, d1.Occurrences)
		require.Equal(t, 0, d1.OnTime)
		require.Equal(t, 0.0, *d1.Uptime)
		require.Nil(t, d1.RunP50MS)
		require.Equal(t, api.IncidentTally{Count: 1, DurationSeconds: 11*3600 + 59*60 + 50}, d1.Incidents["failed"])
		require.Equal(t, api.IncidentTally{}, d1.Incidents["missed"])

		require.Len(t, u.Windows, 3)
		for i, days := range []int{7, 30, 90} {
			w := u.Windows[i]
			require.Equal(t, days, w.Days)
			require.Equal(t, 2, w.Occurrences)
			require.Equal(t, 0.5, *w.Uptime)
			require.Equal(t, api.IncidentTally{Count: 1, DurationSeconds: 43190}, w.Incidents["failed"])
		}

		// Without ?days, 90 days, today last.
		r = b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/uptime", b.ro, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &u)
		require.Len(t, u.Days, 90)
		require.Equal(t, "2026-11-01", u.Days[89].Date)
		require.Nil(t, u.Days[0].Uptime, "a day without occurrences has no uptime")

		for _, bad := range []string{"0", "91", "x", "-1", "1.5"} {
			r := b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/uptime?days="+bad, b.ro, nil)
			require.Equal(t, http.StatusBadRequest, r.status, "days=%s: %s", bad, r.body)
			e := r.errorBody(t)
			require.Equal(t, "days", e.Field, "days=%s", bad)
			require.Contains(t, e.Error, "days", "days=%s", bad)
		}
		r = b.do(http.MethodGet, "/api/v1/monitors/nope/uptime", b.ro, nil)
		require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	})
}
