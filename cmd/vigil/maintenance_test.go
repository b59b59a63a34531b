package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
)

func TestMaintenanceCommand(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := startVigil(t, db(t))
			env := map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey}

			code, _, errOut := runVigil(t, env, "maintenance", "start", "--for", "2h")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "--tag, --monitor or --all")

			before := time.Now()
			code, out, errOut := runVigil(t, env, "maintenance", "start", "--tag", "db", "--for", "2h")
			require.Equal(t, 0, code, errOut)
			id := strings.TrimSpace(out)
			w, err := v.store.MaintenanceWindowGet(context.Background(), v.project.ID, id)
			require.NoError(t, err)
			require.Equal(t, []string{"db"}, w.Tags)
			require.WithinDuration(t, before.Add(2*time.Hour), w.EndsAt, 5*time.Second)
			require.True(t, w.Active(time.Now()))
			require.True(t, w.Covers(&monitors.Monitor{ProjectID: v.project.ID, Tags: []string{"db"}}))

			code, out, errOut = runVigil(t, env, "maintenance", "list")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, id)
			require.Contains(t, out, "tag:db")
			require.Contains(t, out, "in effect until")

			code, _, errOut = runVigil(t, env, "maintenance", "end", "--tag", "db")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, errOut, "ended")
			w, err = v.store.MaintenanceWindowGet(context.Background(), v.project.ID, id)
			require.NoError(t, err)
			require.NotNil(t, w.EndedAt)
			require.False(t, w.Active(time.Now()))

			code, _, errOut = runVigil(t, env, "maintenance", "end", "--tag", "db")
			require.Equal(t, 1, code)
			require.Contains(t, errOut, "no window in effect")
		})
	}
}

func TestSnoozeCommand(t *testing.T) {
	t.Parallel()
	v := startVigil(t, testdb.SQLitePath(t))
	env := map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey}
	m := &monitors.Monitor{ID: "mon_snooze", ProjectID: v.project.ID, Slug: "nightly-backup", PingKey: "pk_snooze_cmd_0123456789",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	m.ApplyDefaults()
	require.NoError(t, v.store.MonitorInsert(context.Background(), m))
	snoozed := func() *time.Time {
		got, err := v.store.MonitorGet(context.Background(), v.project.ID, m.ID)
		require.NoError(t, err)
		return got.SnoozedUntil
	}

	code, _, errOut := runVigil(t, env, "snooze", "nightly-backup")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--for D or --until TIME")
	code, _, errOut = runVigil(t, env, "snooze", "nightly-backup", "--for", "1h", "--until", "2030-01-01T00:00:00Z")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not both")
	code, _, errOut = runVigil(t, env, "snooze", "nightly-backup", "--for", "200h")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "seconds: must be between 1 and 604800")
	require.Nil(t, snoozed())

	before := time.Now()
	code, out, errOut := runVigil(t, env, "snooze", "nightly-backup", "--for", "1h")
	require.Equal(t, 0, code, errOut)
	require.WithinDuration(t, before.Add(time.Hour), *snoozed(), 5*time.Second)
	require.Equal(t, snoozed().Format(time.RFC3339), strings.TrimSpace(out))

	code, _, errOut = runVigil(t, env, "snooze", "--end", m.ID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "nightly-backup is not snoozed")
	require.Nil(t, snoozed())
}
