package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestBatchProjectsOfAMovedKey: the store remembers the project of each
// monitor ping key its batches loaded, and a batch reads the rules of the
// projects it remembers by ID. A key that names a monitor of another
// project by the next batch is judged under that project's maintenance
// window, not under the remembered project's; and the other way round.
func TestBatchProjectsOfAMovedKey(t *testing.T) {
	s := testdb.Postgres(t)
	ctx := t.Context()
	quiet, maint := storetest.MustProject(t, s), storetest.MustProject(t, s)
	w := &monitors.MaintenanceWindow{ID: storetest.RandomID("mw_"), ProjectID: maint.ID, Name: "upgrade", All: true,
		StartsAt: storetest.T0.Add(-time.Hour), EndsAt: storetest.T0.Add(2 * time.Hour), CreatedAt: storetest.T0, UpdatedAt: storetest.T0}
	require.NoError(t, s.MaintenanceWindowCreate(ctx, w))
	at := storetest.T0.Add(time.Minute)
	m := storetest.MustMonitor(t, s, quiet.ID, "first", nil)
	for i, project := range []*monitors.Project{maint, quiet, maint} {
		res := storetest.MustRecord(t, s, storetest.Ping(m, monitors.PingSuccess, at))
		require.Equal(t, m.ID, res[0].MonitorID)
		require.Equal(t, m.ProjectID == maint.ID, len(res[0].Monitor.Maintenance) > 0, "move %d: under its own project's window", i)
		// The key now names a new monitor of the next project.
		require.NoError(t, s.MonitorDelete(ctx, m.ProjectID, m.ID))
		key := m.PingKey
		m = storetest.MustMonitor(t, s, project.ID, storetest.RandomID("moved-"), func(m *monitors.Monitor) { m.PingKey = key })
		at = at.Add(time.Minute)
	}
	res := storetest.MustRecord(t, s, storetest.Ping(m, monitors.PingSuccess, at))
	require.Equal(t, m.ID, res[0].MonitorID)
	require.NotEmpty(t, res[0].Monitor.Maintenance, "the last move: under its own project's window")
}
