package delivery_test

import (
	"context"
	"database/sql"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// TestRescueAfterDefault: with the default attempt timeout, a job left
// running by a dead process is sent again within a minute of its attempt,
// and never while a live worker may still hold it.
func TestRescueAfterDefault(t *testing.T) {
	t.Parallel()
	after := delivery.RescueAfter(0)
	require.Equal(t, 45*time.Second, after)
	require.Equal(t, after, delivery.RescueAfter(notifiers.AttemptTimeoutDefault))
	require.Greater(t, after, notifiers.AttemptTimeoutDefault+10*time.Second, "longer than River's bound on the job")
	require.LessOrEqual(t, after+delivery.RescueEveryDefault+delivery.PollIntervalDefault, time.Minute,
		"found, made available and fetched within a minute")
	require.Equal(t, 2*time.Minute+15*time.Second, delivery.RescueAfter(2*time.Minute), "a longer timeout waits longer")
}

// TestRescueLeftRunning takes back a delivery job that no worker will end
// (as if its process had died) once it has run for RescueAfter with the
// default timeout, and not a second earlier; the receiver then gets the
// notification again with the same Vigil-Delivery-Id.
func TestRescueLeftRunning(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					<-r.Context().Done() // the first attempt hangs, as at a crash
				}
			})
			h := newHarness(t, dialect, func(c *delivery.Config) { c.Timeout = 0 })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))
			require.Eventually(t, func() bool { return calls.Load() == 1 }, 20*time.Second, 10*time.Millisecond)
			ctx := context.Background()

			h.setAttemptedAt(time.Now().Add(-delivery.RescueAfter(0) + time.Second))
			n, err := h.svc.RescueOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "a job younger than RescueAfter may still be a live worker's")

			h.setAttemptedAt(time.Now().Add(-delivery.RescueAfter(0) - time.Second))
			n, err = h.svc.RescueOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliverySent, d.State)
			reqs := recv.Requests()
			require.Len(t, reqs, 2)
			id := reqs[0].Header.Get(webhook.DeliveryIDHeader)
			require.Equal(t, delivery.DeliveryID(d), id)
			require.Equal(t, id, reqs[1].Header.Get(webhook.DeliveryIDHeader), "the same ID on the attempt after the rescue")
		})
	}
}

// setAttemptedAt sets when River's running jobs were last attempted.
func (h *harness) setAttemptedAt(at time.Time) {
	h.t.Helper()
	var (
		db  *sql.DB
		err error
		res sql.Result
	)
	switch h.dialect {
	case "sqlite":
		db, err = sql.Open("sqlite", "file:"+h.db+"?_pragma=busy_timeout(10000)")
		require.NoError(h.t, err)
		defer db.Close()
		// River's SQLite driver's own format for times.
		res, err = db.Exec(`UPDATE river_job SET attempted_at = ? WHERE state = 'running'`,
			at.UTC().Format("2006-01-02 15:04:05.000"))
	default:
		db, err = sql.Open("pgx", h.db)
		require.NoError(h.t, err)
		defer db.Close()
		res, err = db.Exec(`UPDATE river_job SET attempted_at = $1 WHERE state = 'running'`, at.UTC())
	}
	require.NoError(h.t, err)
	n, err := res.RowsAffected()
	require.NoError(h.t, err)
	require.EqualValues(h.t, 1, n, "one job is running")
}
