package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestListMarkerCountsPruningsByProject checks the marker's count of run
// prunings, which it reads by monitor_runs_pruned.project_id (migration
// 0030), not through the project's monitors: a monitor pruned, moved to
// another project and pruned again moves the marker of the project it is
// in at each step, and a pruning moves no other project's marker. It
// fails with the column kept by an insert trigger alone (the second
// pruning would count in the old project).
func TestListMarkerCountsPruningsByProject(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()
	p, q, other := storetest.MustProject(t, s), storetest.MustProject(t, s), storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	storetest.MustMonitor(t, s, other.ID, "job", nil)
	marker := func(projectID string) string {
		t.Helper()
		v, err := s.MonitorListMarker(ctx, projectID)
		require.NoError(t, err)
		return v
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	runs := func(n int) {
		t.Helper()
		for range n {
			at = at.Add(time.Minute)
			storetest.MustRecord(t, s, storetest.Ping(m, monitors.PingSuccess, at))
		}
	}
	prune := func() {
		t.Helper()
		n, err := s.PingPrune(ctx, &monitors.PingPruneParams{KeepRuns: 2})
		require.NoError(t, err)
		require.NotZero(t, n)
	}
	runs(4)
	before, beforeOther := marker(p.ID), marker(other.ID)
	prune()
	require.NotEqual(t, before, marker(p.ID), "a first pruning")
	require.Equal(t, beforeOther, marker(other.ID), "another project's pruning")

	_, err := pgstore.Pool(s).Exec(ctx, `UPDATE monitors SET project_id = $1 WHERE id = $2`, q.ID, m.ID)
	require.NoError(t, err)
	m.ProjectID = q.ID
	runs(4)
	before, beforeP := marker(q.ID), marker(p.ID)
	prune()
	require.NotEqual(t, before, marker(q.ID), "a pruning after a move counts in the monitor's new project")
	require.NotEqual(t, beforeP, marker(p.ID), "and the old one's, which the row leaves")
	require.Equal(t, beforeOther, marker(other.ID))

	runs(4)
	before = marker(q.ID)
	prune()
	require.NotEqual(t, before, marker(q.ID), "a third pruning")
}
