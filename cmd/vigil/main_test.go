package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/server"
)

func runVigil(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCronNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"autumn repeated 01:30 runs once", []string{"30 1 * * *", "--tz", "America/New_York", "--from", "2026-10-31T12:00:00-04:00", "-n", "3"},
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00"}},
		{"spring skipped 02:30 runs after the gap", []string{"30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "2"},
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"hourly follows elapsed time in autumn", []string{"0 * * * *", "--tz", "America/New_York", "--from", "2026-11-01T00:30:00-04:00", "-n", "3"},
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"flags before the expression", []string{"-n", "2", "--from", "2026-01-01T00:00:00Z", "@daily"},
			[]string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		// The "Done when" of issue 12: each scheduler's own reading.
		{"robfig skips the spring day", []string{"30 2 * * *", "--dialect", "robfig", "--tz", "America/New_York",
			"--from", "2026-03-07T12:00:00-05:00", "-n", "2"},
			[]string{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{"quartz counts Sunday as 1", []string{"0 30 2 ? * 1#2", "--dialect", "quartz", "--tz", "Europe/Berlin",
			"--from", "2026-03-01T00:00:00+01:00", "-n", "2"},
			[]string{"2026-03-08T02:30:00+01:00", "2026-04-12T02:30:00+02:00"}},
		{"quartz skips the spring gap", []string{"0 30 2 ? * 1#2", "--dialect", "quartz", "--tz", "America/New_York",
			"--from", "2026-03-01T00:00:00-05:00", "-n", "1"},
			[]string{"2026-04-12T02:30:00-04:00"}},
		{"robfig runs 01:30 twice in autumn", []string{"30 1 * * *", "--dialect=robfig", "--tz", "America/New_York",
			"--from", "2026-10-31T12:00:00-04:00", "-n", "3"},
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}},
		{"robfig's CRON_TZ wins", []string{"CRON_TZ=Europe/Berlin 0 0 2 * * *", "--dialect", "robfig",
			"--from", "2026-03-28T00:00:00Z", "-n", "2"},
			[]string{"2026-03-28T02:00:00+01:00", "2026-03-30T02:00:00+02:00"}},
		{"robfig's @every counts from --from", []string{"@every 90m", "--dialect", "robfig", "--tz", "Europe/Berlin",
			"--from", "2026-03-28T00:00:00Z", "-n", "2"},
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-28T04:00:00+01:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runVigil(t, nil, append([]string{"cron", "next"}, tt.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, strings.Join(tt.want, "\n")+"\n", out)
		})
	}
}

func TestCronNextRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"0 0 30 2 *"}, "never"},
		{[]string{"61 * * * *"}, "61"},
		{[]string{"0 * * * *", "--tz", "Mars/Olympus"}, `unknown time zone "Mars/Olympus"`},
		{[]string{"0 * * * *", "--from", "yesterday"}, "RFC 3339"},
		{[]string{}, "exactly one expression"},
		{[]string{"0 30 2 ? * 1#2"}, `set schedule.dialect to "quartz"`},
		{[]string{"30 2 * * *", "--dialect", "quartz"}, "seconds first"},
		{[]string{"0 0 L * *", "--dialect", "robfig"}, `valid in the cronie dialect`},
		{[]string{"0 * * * *", "--dialect", "vixie"}, `"vixie" is not one of cronie, robfig, quartz`},
	} {
		code, out, errOut := runVigil(t, nil, append([]string{"cron", "next"}, tt.args...)...)
		require.NotEqual(t, 0, code, "args %q", tt.args)
		require.Empty(t, out)
		require.Contains(t, errOut, tt.want, "args %q", tt.args)
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	code, _, errOut := runVigil(t, nil, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "frobnicate"`)
}

func TestSettingsFromEnvAndFlags(t *testing.T) {
	t.Parallel()
	var cfg server.Config
	env := &cmdEnv{getenv: func(k string) string {
		return map[string]string{"VIGIL_LISTEN": "127.0.0.1:9999", "VIGIL_DATABASE_URL": "/tmp/env.db"}[k]
	}}
	fs := newFlagSet(env)
	require.NoError(t, parseSettings(env, fs, serverSettings(&cfg), []string{"--database", "/tmp/flag.db", "--allow-private-targets"}))
	require.Equal(t, "127.0.0.1:9999", cfg.Listen, "from the environment")
	require.Equal(t, "/tmp/flag.db", cfg.DatabaseURL, "a flag wins")
	require.True(t, cfg.Delivery.AllowPrivate, "a bare boolean flag turns it on")
	require.NoError(t, cfg.Validate())
	require.Equal(t, "http://127.0.0.1:9999", cfg.BaseURL)

	bad := &cmdEnv{getenv: func(k string) string {
		return map[string]string{"VIGIL_KEEP_PINGS": "lots", "VIGIL_ALLOW_PRIVATE_TARGETS": "maybe"}[k]
	}}
	err := parseSettings(bad, newFlagSet(bad), serverSettings(&cfg), nil)
	require.ErrorContains(t, err, "VIGIL_KEEP_PINGS")
	require.ErrorContains(t, err, "VIGIL_ALLOW_PRIVATE_TARGETS", "all problems are reported together")
}

// TestReadmeListsEverySetting keeps the README's configuration table true.
func TestReadmeListsEverySetting(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var cfg server.Config
	for _, s := range serverSettings(&cfg) {
		row := regexp.MustCompile("(?m)^\\| `" + s.env + "` \\| `--" + regexp.QuoteMeta(s.flag) + "` \\|")
		require.Regexp(t, row, string(readme), "README's configuration table lacks %s / --%s", s.env, s.flag)
	}
}
