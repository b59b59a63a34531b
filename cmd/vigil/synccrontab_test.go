package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/cronietest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// liveVigil is a Vigil server serving on loopback for a test.
type liveVigil struct {
	url, apiKey string
	project     *monitors.Project
	store       monitors.Store
}

// startVigil runs a whole Vigil server (ingest, evaluator, API) on dbURL,
// on a free loopback port, until the test ends.
func startVigil(t *testing.T, dbURL string) *liveVigil {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, server.Config{DatabaseURL: dbURL, Listen: "127.0.0.1:0", LogLevel: "warn",
		LogFormat: "text", KeepPings: 1000, KeepRuns: 1000, PruneInterval: time.Hour, SecretKeyFile: testdb.KeyFile(dbURL)}, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.NotNil(t, srv.Bootstrapped)
	return &liveVigil{url: "http://" + srv.Addr(), apiKey: srv.Bootstrapped.APIKey,
		project: srv.Bootstrapped.Project, store: srv.Store()}
}

func (v *liveVigil) monitor(t *testing.T, slug string) *monitors.Monitor {
	t.Helper()
	m, err := v.store.MonitorGetBySlug(context.Background(), v.project.ID, slug)
	require.NoError(t, err, slug)
	return m
}

const userCrontab = `# the nightly jobs
MAILTO=ops@example.com
SHELL=/bin/sh

0 2 * * * /usr/local/bin/nightly-import --all > /dev/null 2>&1
# vigil: db-vacuum
*/15 9-17 * * 1-5 psql -c 'VACUUM ANALYZE'
CRON_TZ=America/New_York
30 7 * * * date +\%Y-\%m-\%d >> /tmp/dates
0 6 * * 1 printf '[\%s]\n' "$(cat)" "it's"%Dear ops,%the report is attached.
@reboot /usr/local/bin/start-agent
61 * * * * /usr/local/bin/never
not a cron line
`

func TestSyncCrontab(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := startVigil(t, db(t))
			exe, err := os.Executable()
			require.NoError(t, err)
			dir := t.TempDir()
			file := filepath.Join(dir, "crontab")
			require.NoError(t, os.WriteFile(file, []byte(userCrontab), 0o600))
			env := map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey}
			sync := func(args ...string) (int, string, string) {
				return runVigil(t, env, append([]string{"sync", "crontab", "--file", file, "--vigil", exe, "--tz", "Europe/Berlin"}, args...)...)
			}

			code, out, errOut := sync()
			require.Equal(t, 0, code, errOut)
			require.Contains(t, errOut, "monitors: 4 created, 0 updated, 0 unchanged")
			for _, want := range []string{
				"line 1: comment", "line 2: environment MAILTO", "line 3: environment SHELL",
				"line 8: environment CRON_TZ (the zone of the job lines below)",
				"line 11: @reboot: runs once at boot", "/usr/local/bin/start-agent",
				"line 12: unreadable: Vigil refused its monitor: schedule.expr:", "61 * * * * /usr/local/bin/never",
				"line 13: unreadable: not a job",
			} {
				require.Contains(t, errOut, want)
			}
			imp := v.monitor(t, "nightly-import-all")
			require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin",
				Dialect: monitors.DialectCronie}, imp.Schedule, "the machine's zone (--tz here)")
			vac := v.monitor(t, "db-vacuum")
			require.Equal(t, "*/15 9-17 * * 1-5", vac.Schedule.Expr)
			dates := v.monitor(t, "date-y-m-d")
			require.Equal(t, "America/New_York", dates.Schedule.TZ, "CRON_TZ")
			report := v.monitor(t, "printf-s-n")
			require.Equal(t, "0 6 * * 1", report.Schedule.Expr)
			ms, err := v.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: v.project.ID, Now: time.Now()})
			require.NoError(t, err)
			require.Len(t, ms, 4, "nothing for @reboot, the refused line or the unreadable one")

			// The rewritten crontab: each job under vigil run with its own
			// ping key; every other line as it was.
			run := exe + " run --url " + v.url + " --key "
			for _, want := range []string{
				"# the nightly jobs\nMAILTO=ops@example.com\nSHELL=/bin/sh\n\n",
				"# vigil: nightly-import-all\n0 2 * * * " + run + imp.PingKey + ` -- /bin/sh -c '/usr/local/bin/nightly-import --all > /dev/null 2>&1'` + "\n",
				"# vigil: db-vacuum\n*/15 9-17 * * 1-5 " + run + vac.PingKey + ` -- /bin/sh -c 'psql -c '\''VACUUM ANALYZE'\'''` + "\n",
				"CRON_TZ=America/New_York\n# vigil: date-y-m-d\n30 7 * * * " + run + dates.PingKey + ` -- /bin/sh -c 'date +\%Y-\%m-\%d >> /tmp/dates'` + "\n",
				"0 6 * * 1 " + run + report.PingKey + ` -- /bin/sh -c 'printf '\''[\%s]\n'\'' "$(cat)" "it'\''s"'%Dear ops,%the report is attached.` + "\n",
				"@reboot /usr/local/bin/start-agent\n61 * * * * /usr/local/bin/never\nnot a cron line\n",
			} {
				require.Contains(t, out, want)
			}
			first := out

			// The % line, run as cron runs it, reports to Vigil with the
			// input cron gives it.
			var line string
			for l := range strings.Lines(out) {
				if strings.HasPrefix(l, "0 6 * * 1 ") {
					line = strings.TrimSuffix(strings.TrimPrefix(l, "0 6 * * 1 "), "\n")
				}
			}
			got := cronietest.Run(t, "/bin/sh", line, "VIGIL_TEST_AS_VIGIL=1")
			want := cronietest.Run(t, "/bin/sh", strings.SplitN(strings.Split(userCrontab, "\n")[9], " ", 6)[5])
			require.Equal(t, "[Dear ops,\nthe report is attached.]\n[it's]\n", want)
			require.Equal(t, want, got)
			pings, err := v.store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: v.project.ID, MonitorID: report.ID})
			require.NoError(t, err)
			require.Len(t, pings, 2)
			require.Equal(t, monitors.PingSuccess, pings[0].Kind)
			require.Equal(t, want, pings[0].Body)
			require.Equal(t, monitors.PingStart, pings[1].Kind)

			// --write keeps a backup and writes the file; then a second
			// run changes nothing: no monitor, no file.
			code, out, errOut = sync("--write")
			require.Equal(t, 0, code, errOut)
			require.Equal(t, first, out)
			require.Contains(t, errOut, "monitors: 0 created, 0 updated, 4 unchanged")
			written, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Equal(t, first, string(written))
			backups, err := filepath.Glob(file + ".vigil-backup-*")
			require.NoError(t, err)
			require.Len(t, backups, 1)
			kept, err := os.ReadFile(backups[0])
			require.NoError(t, err)
			require.Equal(t, userCrontab, string(kept))
			st, err := os.Stat(backups[0])
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

			code, out, errOut = sync("--write")
			require.Equal(t, 0, code, errOut)
			require.Equal(t, first, out, "the rewritten crontab is read back as it is")
			require.Contains(t, errOut, "monitors: 0 created, 0 updated, 4 unchanged")
			require.Contains(t, errOut, "nothing written")
			backups, _ = filepath.Glob(file + ".vigil-backup-*")
			require.Len(t, backups, 1, "no new backup")
			require.True(t, v.monitor(t, "db-vacuum").UpdatedAt.Equal(vac.UpdatedAt), "not touched")

			// A changed schedule updates its monitor, and only it.
			edited := strings.Replace(first, "*/15 9-17 * * 1-5 ", "*/30 9-17 * * 1-5 ", 1)
			require.NoError(t, os.WriteFile(file, []byte(edited), 0o600))
			code, out, errOut = sync()
			require.Equal(t, 0, code, errOut)
			require.Contains(t, errOut, "monitors: 0 created, 1 updated, 3 unchanged")
			require.Contains(t, errOut, "updated: db-vacuum")
			require.Equal(t, edited, out)
			require.Equal(t, "*/30 9-17 * * 1-5", v.monitor(t, "db-vacuum").Schedule.Expr)
			require.Equal(t, vac.PingKey, v.monitor(t, "db-vacuum").PingKey)

			// A bad key stops before anything is printed.
			code, out, errOut = runVigil(t, map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": "vk_nope"},
				"sync", "crontab", "--file", file, "--vigil", exe)
			require.Equal(t, 1, code)
			require.Empty(t, out)
			require.Contains(t, errOut, "401")
		})
	}
}

// TestSyncUserCrontab reads the crontab with "crontab -l" and installs it
// with "crontab -", here a stand-in crontab command on PATH that keeps the
// table in a file.
func TestSyncUserCrontab(t *testing.T) {
	// Not parallel: it sets PATH and HOME.
	v := startVigil(t, testdb.SQLitePath(t))
	dir := t.TempDir()
	table := filepath.Join(dir, "table")
	require.NoError(t, os.WriteFile(table, []byte("0 3 * * * /opt/backup.sh\n"), 0o600))
	script := "#!/bin/sh\ncase \"$1\" in\n-l) cat " + table + ";;\n-) cat > " + table + ";;\n*) exit 2;;\nesac\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crontab"), []byte(script), 0o755))
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	env := map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey}

	code, out, errOut := runVigil(t, env, "sync", "crontab", "--write", "--vigil", "/usr/local/bin/vigil", "--tz", "UTC")
	require.Equal(t, 0, code, errOut)
	m := v.monitor(t, "backup-sh")
	want := "# vigil: backup-sh\n0 3 * * * /usr/local/bin/vigil run --url " + v.url + " --key " + m.PingKey + " -- /bin/sh -c '/opt/backup.sh'\n"
	require.Equal(t, want, out)
	installed, err := os.ReadFile(table)
	require.NoError(t, err)
	require.Equal(t, want, string(installed))
	require.Contains(t, errOut, "installed the crontab")
	backups, err := filepath.Glob(filepath.Join(dir, "config", "vigil", "crontab-backup-*"))
	require.NoError(t, err)
	require.Len(t, backups, 1)

	code, _, errOut = runVigil(t, env, "sync", "crontab", "--write", "--vigil", "/usr/local/bin/vigil", "--tz", "UTC")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "nothing written")
}

func TestSyncCrontabUsage(t *testing.T) {
	t.Parallel()
	code, _, errOut := runVigil(t, nil, "sync", "crontab", "--file", "x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no Vigil URL")
	require.Contains(t, errOut, "no API key")
	code, _, errOut = runVigil(t, nil, "sync", "fstab")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "vigil sync crontab")
	code, _, errOut = runVigil(t, map[string]string{"VIGIL_URL": "http://127.0.0.1:1", "VIGIL_API_KEY": "k"},
		"sync", "crontab", "--file", filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "read the crontab")
}

// TestReadmeCrontabExample runs the README's "Crontab" example: the
// crontab after is what the sync prints for the one before.
func TestReadmeCrontabExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Crontab\n")
	require.True(t, ok)
	var blocks []string
	for _, part := range strings.Split(section, "```cron\n")[1:3] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	v := startVigil(t, testdb.SQLitePath(t))
	file := filepath.Join(t.TempDir(), "crontab")
	require.NoError(t, os.WriteFile(file, []byte(blocks[0]), 0o600))
	code, out, errOut := runVigil(t, map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey},
		"sync", "crontab", "--file", file, "--vigil", "/usr/local/bin/vigil", "--tz", "Europe/Berlin")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "monitors: 3 created, 0 updated, 0 unchanged")
	key := regexp.MustCompile(`--key [0-9a-f-]{36} `)
	norm := func(s string) string { return key.ReplaceAllString(s, "--key KEY ") }
	require.Equal(t, norm(blocks[1]), norm(strings.ReplaceAll(out, v.url, "https://vigil.example.com")))
}

// TestSyncSystemCrontab syncs a crontab in the system format: the user
// column is kept, and is not part of the command.
func TestSyncSystemCrontab(t *testing.T) {
	t.Parallel()
	v := startVigil(t, testdb.SQLitePath(t))
	file := filepath.Join(t.TempDir(), "cron.d-backup")
	tab := "SHELL=/bin/bash\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\n# vigil: pg-dump\n30 1 * * *\tpostgres\tpg_dump -Fc app > /backup/app.dump\n@reboot root /usr/local/bin/warm-cache\n"
	require.NoError(t, os.WriteFile(file, []byte(tab), 0o644))
	env := map[string]string{"VIGIL_URL": v.url, "VIGIL_API_KEY": v.apiKey}
	code, out, errOut := runVigil(t, env, "sync", "crontab", "--system", "--file", file, "--vigil", "/usr/local/bin/vigil", "--tz", "UTC", "--write")
	require.Equal(t, 0, code, errOut)
	m := v.monitor(t, "pg-dump")
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 1 * * *", TZ: "UTC", Dialect: monitors.DialectCronie}, m.Schedule)
	want := "SHELL=/bin/bash\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\n# vigil: pg-dump\n30 1 * * *\tpostgres\t/usr/local/bin/vigil run --url " + v.url +
		" --key " + m.PingKey + " -- /bin/bash -c 'pg_dump -Fc app > /backup/app.dump'\n@reboot root /usr/local/bin/warm-cache\n"
	require.Equal(t, want, out)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, want, string(written))
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "the file keeps its mode")
}

func TestSyncCrontabHelpHidesTheKey(t *testing.T) {
	t.Parallel()
	code, _, errOut := runVigil(t, map[string]string{"VIGIL_API_KEY": "vk_secret_do_not_print", "VIGIL_URL": "http://x"}, "sync", "crontab", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "Usage: vigil sync crontab")
	require.NotContains(t, errOut, "vk_secret_do_not_print")
}
