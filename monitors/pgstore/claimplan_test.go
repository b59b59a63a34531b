package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// TestClaimPlanAtBurst guards the plan of the evaluator's claim when many
// monitors fall due at once while the statistics of monitors, gathered
// before, say that almost none are due: the claim must still walk
// monitor_deadlines_due_idx and look each monitor up by its primary key,
// and stop after one batch. Before the claim fixed its plan, PostgreSQL
// read all of monitors for it (measured at 1,000,000 monitors: 1 s per
// claim), as it does here.
func TestClaimPlanAtBurst(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := testdb.Postgres(t)
	now := time.Now().UTC().Truncate(time.Second)
	project := keys.NewID()
	_, err := st.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: project, Name: "plan", PingKey: keys.NewProjectPingKey(), Now: now})
	require.NoError(t, err)
	insert := func(from, to int, deadline string) {
		t.Helper()
		_, err := st.Pool().Exec(ctx, `INSERT INTO monitors (id, project_id, name, slug, schedule_kind, every_seconds,
			grace_seconds, alert_on_failure, failure_threshold, recovery_threshold, overlap, ping_key, created_at, updated_at,
			status, state, next_deadline)
			SELECT 'm' || i, $1, 'm' || i, 'm' || i, 'interval', 3600, 60, 'final', 1, 1, 'alert', 'k' || i, $2, $2,
				'up', '{}', $2::timestamptz + `+deadline+`
			FROM generate_series($3::int, $4::int) i`, project, now, from, to)
		require.NoError(t, err)
	}
	// Idle monitors, their deadlines over the next day, and the statistics
	// of monitors taken then; monitor_deadlines has none yet (as before
	// autovacuum first analyzes it), so PostgreSQL takes a third of it to be
	// due.
	insert(1, 50000, `(i % 86400 + 3600) * interval '1 second'`)
	_, err = st.Pool().Exec(ctx, `ANALYZE monitors`)
	require.NoError(t, err)
	// Then 2,000 fall due at one instant.
	insert(50001, 52000, `interval '-1 second'`)

	claim, _, err := st.ExplainEvaluateDue(ctx, now, 500)
	require.NoError(t, err)
	t.Log(claim)
	require.Contains(t, claim, "Index Scan using monitor_deadlines_due_idx")
	require.Contains(t, claim, "Index Scan using monitors_pkey")
	require.NotContains(t, claim, "Seq Scan")
	require.NotContains(t, claim, "JIT")
	require.Contains(t, claim, "rows=500 loops=1")
}

// TestClaimPlanSettingsPutBack checks that the settings the claim turns off
// for its own plan are back to their defaults for the rest of its
// transaction.
func TestClaimPlanSettingsPutBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := testdb.Postgres(t)
	settings := []string{"enable_bitmapscan", "enable_sort", "enable_seqscan", "enable_hashjoin", "enable_mergejoin",
		"enable_material", "enable_memoize", "jit"}
	err := st.InTx(ctx, func(tx plan.Tx) error {
		want := map[string]string{}
		for _, name := range settings {
			v, err := plan.One(ctx, tx, func(r plan.Row) (s string, err error) { return s, r.Scan(&s) },
				`SELECT reset_val FROM pg_settings WHERE name = $1`, name)
			require.NoError(t, err)
			want[name] = v
		}
		_, err := tx.MonitorClaimDue(ctx, time.Now(), 10)
		require.NoError(t, err)
		for _, name := range settings {
			v, err := plan.One(ctx, tx, func(r plan.Row) (s string, err error) { return s, r.Scan(&s) },
				`SELECT current_setting($1)`, name)
			require.NoError(t, err)
			require.Equal(t, want[name], v, name)
		}
		return nil
	})
	require.NoError(t, err)
}
