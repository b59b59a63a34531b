package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

var (
	t0      = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	uuidKey = "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278"
	projKey = "fqOOd6-F4MMNuCEnzTU01w"
)

func TestParsePathForms(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	tests := []struct {
		path    string
		kind    monitors.PingKind
		exit    *int
		pingKey string
		slug    string
	}{
		{uuidKey, monitors.PingSuccess, nil, uuidKey, ""},
		{uuidKey + "/", monitors.PingSuccess, nil, uuidKey, ""},
		{strings.ToUpper(uuidKey), monitors.PingSuccess, nil, uuidKey, ""},
		{uuidKey + "/success", monitors.PingSuccess, nil, uuidKey, ""},
		{uuidKey + "/complete", monitors.PingSuccess, nil, uuidKey, ""},
		{uuidKey + "/start", monitors.PingStart, nil, uuidKey, ""},
		{uuidKey + "/fail", monitors.PingFail, nil, uuidKey, ""},
		{uuidKey + "/log", monitors.PingLog, nil, uuidKey, ""},
		{uuidKey + "/skip", monitors.PingSkip, nil, uuidKey, ""},
		{uuidKey + "/cancel", monitors.PingCancel, nil, uuidKey, ""},
		{uuidKey + "/0", monitors.PingSuccess, code(0), uuidKey, ""},
		{uuidKey + "/1", monitors.PingFail, code(1), uuidKey, ""},
		{uuidKey + "/255", monitors.PingFail, code(255), uuidKey, ""},
		{uuidKey + "/007", monitors.PingFail, code(7), uuidKey, ""},
		{projKey + "/db-backup", monitors.PingSuccess, nil, "", "db-backup"},
		{projKey + "/db-backup/start", monitors.PingStart, nil, "", "db-backup"},
		{projKey + "/db-backup/complete", monitors.PingSuccess, nil, "", "db-backup"},
		{projKey + "/db-backup/42", monitors.PingFail, code(42), "", "db-backup"},
		{projKey + "/start", monitors.PingSuccess, nil, "", "start"}, // a slug named start
		{projKey + "/a_b-1/cancel", monitors.PingCancel, nil, "", "a_b-1"},
	}
	for _, tt := range tests {
		r, err := parsePath(tt.path)
		require.NoError(t, err, tt.path)
		require.Equal(t, tt.kind, r.Kind, tt.path)
		require.Equal(t, tt.exit, r.ExitCode, tt.path)
		require.Equal(t, tt.pingKey, r.PingKey, tt.path)
		require.Equal(t, tt.slug, r.Slug, tt.path)
		if tt.slug != "" {
			require.Equal(t, projKey, r.ProjectPingKey, tt.path)
		}
	}
}

func TestParseBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, query string
		param, msg        string
	}{
		{"no key", "", "", "key", "no ping key"},
		{"short key", "not-a-key", "", "key", `ping key "not-a-key" is neither`},
		{"key with odd characters", "abc$def!ghi.jkl@mno", "", "key", "neither a UUID"},
		{"project key without slug", projKey, "", "slug", "must be followed by a monitor slug"},
		{"bad slug", projKey + "/Backup", "", "slug", `slug "Backup" must be`},
		{"slug starting with a dash", projKey + "/-x", "", "slug", "starting with a letter or digit"},
		{"exit status 256", uuidKey + "/256", "", "exit_status", `exit status "256" must be between 0 and 255`},
		{"exit status -1", uuidKey + "/-1", "", "exit_status", `exit status "-1" must be between 0 and 255`},
		{"huge exit status", uuidKey + "/99999999999999999999", "", "exit_status", "between 0 and 255"},
		{"unknown suffix", uuidKey + "/finish", "", "suffix", `unknown ping kind "finish"`},
		{"extra segment", uuidKey + "/start/now", "", "suffix", `unexpected "now"`},
		{"rid too long", uuidKey, "rid=" + strings.Repeat("r", 65), "rid", "65 characters long; it must be at most 64"},
		{"rid with a control character", uuidKey, "rid=a%0Ab", "rid", "printable"},
		{"rid with a tab", uuidKey, "rid=a%09b", "rid", "printable"},
		{"rid not UTF-8", uuidKey, "rid=%ff", "rid", "UTF-8"},
		{"rid twice", uuidKey, "rid=a&rid=b", "rid", "more than once"},
		{"attempt 0", uuidKey, "attempt=0", "attempt", `attempt "0" must be a whole number from 1`},
		{"attempt x", uuidKey, "attempt=x", "attempt", `attempt "x"`},
		{"attempt negative", uuidKey, "attempt=-2", "attempt", `attempt "-2"`},
		{"attempt huge", uuidKey, "attempt=1000001", "attempt", "1000000"},
		{"retry_in negative", uuidKey + "/fail", "retry_in=-5", "retry_in", `retry_in "-5" must be a whole number of seconds from 0 to 2592000`},
		{"retry_in absurd", uuidKey + "/fail", "retry_in=2592001", "retry_in", "30 days"},
		{"retry_in not a number", uuidKey + "/fail", "retry_in=soon", "retry_in", `retry_in "soon"`},
		{"retry_at in the past", uuidKey + "/fail", "retry_at=2026-03-02T08:00:00Z", "retry_at", "in the past"},
		{"retry_at not RFC 3339", uuidKey + "/fail", "retry_at=2026-03-02+10:00", "retry_at", "is not an RFC 3339 time"},
		{"retry_at too far", uuidKey + "/fail", "retry_at=2026-05-02T09:00:00Z", "retry_at", "more than 30 days ahead"},
		{"retry_in and retry_at", uuidKey + "/fail", "retry_in=5&retry_at=2026-03-02T10:00:00Z", "retry_in", "not both"},
		{"duration negative", uuidKey, "duration_ms=-1", "duration_ms", `duration_ms "-1"`},
		{"duration absurd", uuidKey, "duration_ms=99999999999999", "duration_ms", "366 days"},
		{"malformed query", uuidKey, "rid=%zz", "query", "malformed"},
		{"scheduled_at not RFC 3339", uuidKey, "scheduled_at=1767236400", "scheduled_at", "is not an RFC 3339 time"},
		{"scheduled_at twice", uuidKey, "scheduled_at=2026-03-02T09:00:00Z&scheduled_at=2026-03-02T08:00:00Z", "scheduled_at", "more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parsePing(tt.path, tt.query, t0)
			var bad *BadRequestError
			require.ErrorAs(t, err, &bad)
			require.Equal(t, tt.param, bad.Param)
			require.Contains(t, bad.Message, tt.msg)
		})
	}
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	r, err := parsePing(uuidKey+"/fail", "rid=run+1&attempt=2&retry_in=90&duration_ms=1500&other=ignored", t0)
	require.NoError(t, err)
	require.Equal(t, "run 1", r.RID)
	require.Equal(t, 2, r.Attempt)
	require.Equal(t, t0.Add(90*time.Second), *r.RetryAt)
	require.Equal(t, int64(1500), *r.DurationMS)
	require.False(t, r.Create, "create has no meaning on a UUID URL")

	r, err = parsePing(uuidKey+"/3", "retry_at=2026-03-02T10:00:00%2B01:00", t0)
	require.NoError(t, err)
	require.Equal(t, monitors.PingFail, r.Kind)
	require.True(t, r.RetryAt.Equal(t0), "a retry_at with an offset")

	r, err = parsePing(uuidKey+"/fail", "retry_at=2026-03-02T08:59:30Z", t0)
	require.NoError(t, err, "within the allowed clock skew")
	require.NotNil(t, r.RetryAt)

	r, err = parsePing(uuidKey+"/fail", "scheduled_at=2026-03-02T05:00:00%2B01:00&retry_in=60", t0)
	require.NoError(t, err)
	require.True(t, r.ScheduledAt.Equal(t0.Add(-5*time.Hour)), "the occurrence of a retry chain hours old")
	r, err = parsePing(uuidKey+"/start", "scheduled_at=2000-01-01T00:00:00Z", t0)
	require.NoError(t, err, "a host clock far off loses no ping")
	require.NotNil(t, r.ScheduledAt)

	r, err = parsePing(uuidKey, "retry_in=60", t0)
	require.NoError(t, err, "a retry on a success is checked, not refused")
	require.Nil(t, r.RetryAt, "and not kept")

	r, err = parsePing(projKey+"/new-job", "create=1&rid=123e4567-e89b-12d3-a456-426614174000", t0)
	require.NoError(t, err)
	require.True(t, r.Create)
	require.Equal(t, "123e4567-e89b-12d3-a456-426614174000", r.RID)

	r, err = parsePing(projKey+"/new-job", "create=yes", t0)
	require.NoError(t, err)
	require.False(t, r.Create, "only create=1 creates, as in Healthchecks.io")

	r, err = parsePing(uuidKey, "rid="+strings.Repeat("é", 64), t0)
	require.NoError(t, err, "64 characters, more bytes")
	require.Equal(t, 64, len([]rune(r.RID)))
}
