package command

// These tests run `vigil run` (Main) against a real Vigil server (package
// realvigil) and check the monitors, pings, runs and incidents Vigil made
// of it. The wrapped command is this test binary (see TestMain).

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk/internal/realvigil"
)

// realMain runs Main with args, then `-- <this binary>` acting as mode.
func realMain(t *testing.T, ctx context.Context, mode string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("VIGIL_TEST_CHILD", mode) // inherited by the command only
	var out, errOut bytes.Buffer
	args = append(args, "--", os.Args[0], "-test.run=^$")
	code = Main(ctx, args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRealRunReportsExitCodeAndOutput(t *testing.T) {
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "nightly-backup"})

	code, stdout, stderr := realMain(t, context.Background(), "big", "--url", v.URL, "--key", m.PingKey, "--tail", "20")
	require.Equal(t, 1, code, "vigil run exits with the command's code")
	require.Len(t, stdout, 10000, "the output is passed through")
	require.Empty(t, stderr, "Vigil took every ping")

	pings := v.Pings(t, m.ID)
	require.Len(t, pings, 2)
	require.Equal(t, "start", pings[0].Kind)
	require.Regexp(t, `^[0-9a-f-]{36}$`, pings[0].RID)
	require.Equal(t, "fail", pings[1].Kind)
	require.Equal(t, pings[0].RID, pings[1].RID)
	require.Equal(t, 1, *pings[1].ExitCode)
	require.Equal(t, "line 0998\nline 0999\n", pings[1].Body, "the tail of the output is the ping's body")
	require.NotNil(t, pings[1].DurationMS)
	runs := v.Runs(t, m.ID)
	require.Equal(t, []string{"fail 0"}, realvigil.RunOutcomes(runs))
	require.Equal(t, 1, *runs[0].ExitCode)
	incidents := v.Incidents(t, m.ID)
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(incidents))
	require.Contains(t, incidents[0].Summary, "exit status 1")

	// A success, with stdout and stderr in the body, resolves it.
	code, stdout, stderr = realMain(t, context.Background(), "ok", "--url", v.URL, "--key", m.PingKey)
	require.Equal(t, 0, code)
	require.Equal(t, "to stdout\n", stdout)
	require.Equal(t, "to stderr\n", stderr)
	pings = v.Pings(t, m.ID)
	require.Equal(t, "success", pings[3].Kind)
	require.Equal(t, 0, *pings[3].ExitCode)
	require.Contains(t, pings[3].Body, "to stdout\n")
	require.Contains(t, pings[3].Body, "to stderr\n")
	require.Equal(t, []string{"fail 0", "success 0"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))
	require.Equal(t, []string{"failed resolved"}, realvigil.IncidentKinds(v.Incidents(t, m.ID)))
	require.Equal(t, "up", v.Monitor(t, "nightly-backup").Status)
}

func TestRealRunCreatesMonitorBySlug(t *testing.T) {
	v := realvigil.Start(t)

	// Without --create, an unknown slug is refused; the command still runs.
	code, stdout, stderr := realMain(t, context.Background(), "ok", "--url", v.URL, "--project-key", v.ProjectPingKey, "--slug", "db-vacuum")
	require.Equal(t, 0, code)
	require.Equal(t, "to stdout\n", stdout)
	require.Contains(t, stderr, "vigil: not found")
	_, ok := v.FindMonitor(t, "db-vacuum")
	require.False(t, ok)

	// With --create, the first ping makes the monitor (201 Created).
	code, _, stderr = realMain(t, context.Background(), "exit3",
		"--url", v.URL, "--project-key", v.ProjectPingKey, "--slug", "db-vacuum", "--create")
	require.Equal(t, 3, code)
	require.Empty(t, stderr, "both pings were taken")
	m := v.Monitor(t, "db-vacuum")
	require.Equal(t, []string{"fail 0"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))
	require.Equal(t, 3, *v.Pings(t, m.ID)[1].ExitCode)
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, m.ID)))
	require.Len(t, v.Monitors(t, ""), 1, "created once")
}

func TestRealRunInterruptedIsCancelled(t *testing.T) {
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "long-report"})
	t.Setenv("VIGIL_TEST_CHILD", "trap")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := newReadyWriter()
	done := make(chan int)
	go func() {
		args := []string{"--url", v.URL, "--key", m.PingKey, "--", os.Args[0], "-test.run=^$"}
		done <- Main(ctx, args, func(string) string { return "" }, strings.NewReader(""), stdout, &bytes.Buffer{})
	}()
	<-stdout.ready
	realvigil.Eventually(t, "the run started", func() bool { return v.Monitor(t, "long-report").Status == "running" })
	cancel() // the host shuts down: SIGTERM goes to the command, which exits 1
	require.Equal(t, 1, <-done)

	require.Equal(t, []string{"cancelled 0"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))
	require.Empty(t, v.Incidents(t, m.ID), "an interrupted command alerts no one")
	require.Equal(t, "up", v.Monitor(t, "long-report").Status)
	require.Contains(t, v.Pings(t, m.ID)[1].Body, "got terminated")
}

func TestRealRunWhileVigilIsDown(t *testing.T) {
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "while-down"})
	v.Stop(t)
	start := time.Now()
	code, stdout, stderr := realMain(t, context.Background(), "exit3", "--url", v.URL, "--key", m.PingKey)
	require.Equal(t, 3, code, "the command's own code")
	require.Equal(t, "failing\n", stdout)
	require.Less(t, time.Since(start), 5*time.Second, "two pings, each tried 3 times 0.25 s and 0.5 s apart")
	require.Contains(t, stderr, "vigil: unavailable")
	require.NotContains(t, stderr, m.PingKey)
}

// TestRealRunPrintsAdvice: vigil run prints Vigil's advice about the
// monitor's settings on standard error, once per run, and sends
// --scheduled-at with each ping, which the ping history keeps.
func TestRealRunPrintsAdvice(t *testing.T) {
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "hourly-export", "grace_seconds": 3600,
		"schedule": map[string]any{"kind": "cron", "expr": "0 * * * *"}})
	require.Len(t, m.Warnings, 1)
	require.True(t, strings.HasPrefix(m.Warnings[0], "grace_seconds: "), m.Warnings[0])

	code, stdout, stderr := realMain(t, context.Background(), "ok", "--url", v.URL, "--key", m.PingKey,
		"--scheduled-at", "2026-03-02T10:00:00+01:00")
	require.Equal(t, 0, code)
	require.Equal(t, "to stdout\n", stdout)
	require.Equal(t, 1, strings.Count(stderr, "grace_seconds: "), "once, though start and finish both carry it:\n%s", stderr)
	require.Contains(t, stderr, "level=WARN")
	require.Contains(t, stderr, "the grace of 1h is not shorter than the 1h between runs")
	require.NotContains(t, stderr, m.PingKey, "no ping key in the output")

	pings := v.Pings(t, m.ID)
	require.Len(t, pings, 2)
	for _, p := range pings {
		require.NotNil(t, p.ScheduledAt, p.Kind)
		require.Equal(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), *p.ScheduledAt, p.Kind)
	}

	// Advice taken: nothing more on stderr than the command's own.
	v.Call(t, "PATCH", "/api/v1/monitors/"+m.ID, map[string]any{"grace_seconds": 300}, 200, nil)
	_, _, stderr = realMain(t, context.Background(), "ok", "--url", v.URL, "--key", m.PingKey)
	require.Equal(t, "to stderr\n", stderr)
}

func TestRealRunCreatesWithSchedule(t *testing.T) {
	for name, db := range realvigil.Databases() {
		t.Run(name, func(t *testing.T) {
			v := realvigil.Start(t, realvigil.WithDatabase(db))
			by := []string{"--url", v.URL, "--project-key", v.ProjectPingKey, "--slug", "nightly-import"}
			code, _, stderr := realMain(t, context.Background(), "ok", append(by, "--create",
				"--schedule", "0 2 * * *", "--tz", "Europe/Berlin", "--grace", "10m", "--max-runtime", "7200")...)
			require.Equal(t, 0, code)
			require.Equal(t, "to stderr\n", stderr, "every ping was taken")
			m := v.Monitor(t, "nightly-import")
			require.Equal(t, "cron", m.Schedule.Kind)
			require.Equal(t, "0 2 * * *", m.Schedule.Expr)
			require.Equal(t, "Europe/Berlin", m.Schedule.TZ)
			require.Equal(t, "cronie", m.Schedule.Dialect)
			require.Equal(t, int64(600), m.GraceSeconds)
			require.Equal(t, int64(7200), m.MaxRuntimeSeconds)
			require.Equal(t, []string{"success 0"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))

			// Other values change nothing without --update.
			code, _, stderr = realMain(t, context.Background(), "ok", append(by, "--create",
				"--schedule", "*/5 * * * *", "--dialect", "robfig", "--grace", "60")...)
			require.Equal(t, 0, code)
			require.Equal(t, "to stderr\n", stderr, "every ping was taken")
			got := v.Monitor(t, "nightly-import")
			require.Equal(t, m.Schedule, got.Schedule)
			require.Equal(t, int64(600), got.GraceSeconds)

			// With --update they change it.
			code, _, stderr = realMain(t, context.Background(), "ok", append(by, "--create", "--update",
				"--schedule", "*/5 * * * *", "--dialect", "robfig", "--grace", "60")...)
			require.Equal(t, 0, code)
			require.Equal(t, "to stderr\n", stderr, "every ping was taken")
			got = v.Monitor(t, "nightly-import")
			require.Equal(t, "*/5 * * * *", got.Schedule.Expr)
			require.Equal(t, "UTC", got.Schedule.TZ)
			require.Equal(t, "robfig", got.Schedule.Dialect)
			require.Equal(t, int64(60), got.GraceSeconds)
			require.Equal(t, int64(7200), got.MaxRuntimeSeconds)
			require.Len(t, v.Runs(t, m.ID), 3)

			// A schedule Vigil refuses creates nothing; the command runs.
			code, stdout, stderr := realMain(t, context.Background(), "ok", "--url", v.URL, "--project-key", v.ProjectPingKey,
				"--slug", "refused", "--create", "--schedule", "0 25 * * *")
			require.Equal(t, 0, code)
			require.Equal(t, "to stdout\n", stdout)
			require.Contains(t, stderr, "schedule: ")
			_, ok := v.FindMonitor(t, "refused")
			require.False(t, ok)
		})
	}
}
