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

func partitionBounds(t *testing.T, s *pgstore.Store) map[string]time.Time {
	t.Helper()
	got, err := pgstore.PingPartitions(t.Context(), s)
	require.NoError(t, err)
	return got
}

func month(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// TestPingPartitions checks the life of the pings' monthly partitions:
// made ahead of time from the end of pings_legacy, old ones dropped with
// their pings once their whole month is older than the history kept, the
// newer ones and the default partition kept.
func TestPingPartitions(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()

	parts := partitionBounds(t, s)
	cutover, ok := parts["pings_legacy"]
	require.True(t, ok, "the table from before partitioning is a partition: %v", parts)
	require.Equal(t, month(cutover), cutover, "the cutover is the first of a month")
	require.True(t, cutover.After(time.Now().AddDate(0, 1, 0)), "the cutover leaves at least a month: %v", cutover)
	require.Contains(t, parts, "pings_default")
	end := month(time.Now().UTC()).AddDate(0, 3, 0)
	for m := cutover; m.Before(end); m = m.AddDate(0, 1, 0) {
		name := "pings_p" + m.Format("200601")
		require.Contains(t, parts, name, "Open made the coming months' partitions")
		require.Equal(t, m.AddDate(0, 1, 0), parts[name])
	}

	// A clock two months past the cutover makes the partitions up to two
	// months past it, in order and without gaps.
	now := cutover.AddDate(0, 2, 10)
	_, err := s.PingAge(ctx, now, time.Time{})
	require.NoError(t, err)
	parts = partitionBounds(t, s)
	for m := cutover; m.Before(month(now).AddDate(0, 3, 0)); m = m.AddDate(0, 1, 0) {
		require.Equal(t, m.AddDate(0, 1, 0), parts["pings_p"+m.Format("200601")], m)
	}

	p := storetest.MustProject(t, s)
	mon := storetest.MustMonitor(t, s, p.ID, "job", nil)
	// In order of arrival, so that IDs and times agree.
	at := []struct {
		what string
		at   time.Time
	}{
		{"legacy", cutover.AddDate(0, -3, 0)},
		{"first", cutover.AddDate(0, 0, 10)},
		{"second", cutover.AddDate(0, 1, 10)},
		{"third", cutover.AddDate(0, 2, 1)},
		{"default", time.Date(2199, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	ids := map[int64]string{}
	for _, a := range at {
		res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
			storetest.Ping(mon, monitors.PingLog, a.at)}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		ids[res[0].PingID] = a.what
	}
	var where string
	require.NoError(t, pgstore.Pool(s).QueryRow(ctx,
		`SELECT tableoid::regclass::text FROM pings WHERE at = $1`, at[4].at).Scan(&where))
	require.Equal(t, "pings_default", where, "a ping outside every partition is still taken")

	// Keeping pings newer than the start of the second month drops the
	// legacy table and the first month, and nothing else.
	n, err := s.PingPrune(ctx, &monitors.PingPruneParams{Before: cutover.AddDate(0, 1, 0), Now: now})
	require.NoError(t, err)
	require.Zero(t, n, "dropped partitions delete no rows")
	parts = partitionBounds(t, s)
	require.NotContains(t, parts, "pings_legacy")
	require.NotContains(t, parts, "pings_p"+cutover.Format("200601"))
	require.Contains(t, parts, "pings_p"+cutover.AddDate(0, 1, 0).Format("200601"))
	require.Contains(t, parts, "pings_default")

	got, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: mon.ID, Limit: 10})
	require.NoError(t, err)
	var left []string
	for _, pg := range got {
		left = append(left, ids[pg.ID])
	}
	require.Equal(t, []string{"default", "third", "second"}, left, "newest first")

	// A ping keeps arriving after the drop, and pruning again is a no-op.
	res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		storetest.Ping(mon, monitors.PingLog, cutover.AddDate(0, 2, 2))}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	_, err = s.PingPrune(ctx, &monitors.PingPruneParams{Before: cutover.AddDate(0, 1, 0), Now: now})
	require.NoError(t, err)
	require.Equal(t, parts, partitionBounds(t, s))
}
