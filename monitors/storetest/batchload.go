package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// RunBatchLoad checks that a batch's load reads each monitor as
// MonitorGet reads it alone: the load reads its rows one after another
// with the same scan targets (plan.MonitorScanner), so nothing of a row
// (its state, retry policy, lists or policies) may show in the next.
func RunBatchLoad(t *testing.T, newStore func(tb testing.TB) BatchLoader) {
	t.Run("PingBatchLoad/EachRowItsOwn", func(t *testing.T) {
		t.Parallel()
		s, ctx := newStore(t), t.Context()
		p := MustProject(t, s)
		ms := []*monitors.Monitor{
			MustMonitor(t, s, p.ID, "with-everything", func(m *monitors.Monitor) {
				m.Tags, m.Channels = []string{"prod", "db"}, []string{}
				m.RetryPolicy = &monitors.RetryPolicy{Name: "nightly", MaxRetries: 3, MaxDelaysSeconds: []int64{60, 600}}
				m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * *", TZ: "Europe/Berlin", Dialect: monitors.DialectRobfig}
				m.AlertOnFailure, m.Overlap, m.TooOften = monitors.AlertEveryAttempt, monitors.OverlapIgnore, monitors.TooOftenAlert
				m.Description = "the nightly backup of the database, with a description longer than the others"
			}),
			MustMonitor(t, s, p.ID, "plain", nil),
			MustMonitor(t, s, p.ID, "retried", func(m *monitors.Monitor) {
				m.RetryPolicy = &monitors.RetryPolicy{MaxRetries: 1}
				m.Tags = []string{"x"}
			}),
			MustMonitor(t, s, p.ID, "plain-again", nil),
		}
		// States of different lengths: one down with a missed incident,
		// one with an open run, two as inserted.
		MustRecord(t, s, Ping(ms[0], monitors.PingFail, T0.Add(time.Minute)), Ping(ms[2], monitors.PingStart, T0.Add(time.Minute)))
		want := make(map[string]*monitors.Monitor, len(ms))
		keys := make([]string, len(ms))
		for i, m := range ms {
			got, err := s.MonitorGet(ctx, p.ID, m.ID)
			require.NoError(t, err)
			want[m.ID], keys[i] = got, m.PingKey
		}
		require.NotEmpty(t, want[ms[0].ID].State.Open, "the first monitor's state holds an incident")
		require.NotEmpty(t, want[ms[2].ID].State.Runs, "the third monitor's state holds a run")
		err := s.InTx(ctx, func(tx plan.Tx) error {
			rows, err := tx.PingBatchLoad(ctx, &plan.PingBatchQuery{PingKeys: keys, ProjectKeys: []string{}, Slugs: []plan.SlugRef{}, IDs: 1})
			require.NoError(t, err)
			require.Len(t, rows.Monitors, len(ms))
			for _, got := range rows.Monitors {
				require.Equal(t, want[got.ID], got, "monitor %s", got.Slug)
			}
			return errRollBack
		})
		require.ErrorIs(t, err, errRollBack)
	})
}
