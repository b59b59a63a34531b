package ingest

import (
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// FuzzParsePing checks that no path and query make the parser panic, and
// that whatever it accepts is within the documented limits. The seed
// corpus is in testdata/fuzz/FuzzParsePing; plain go test runs it.
func FuzzParsePing(f *testing.F) {
	f.Add(uuidKey, "")
	f.Add(uuidKey+"/fail", "rid=abc&attempt=2&retry_in=30")
	f.Add(projKey+"/backup/start", "create=1")
	f.Fuzz(func(t *testing.T, path, query string) {
		r, err := parsePing(path, query, t0)
		if err != nil {
			var bad *BadRequestError
			require.ErrorAs(t, err, &bad)
			require.NotEmpty(t, bad.Message)
			require.NotEmpty(t, bad.Param)
			return
		}
		require.True(t, (r.PingKey != "") != (r.ProjectPingKey != "" && r.Slug != ""), "one way to name the monitor")
		if r.PingKey != "" {
			require.True(t, isUUID(r.PingKey))
			require.False(t, r.Create)
		} else {
			require.True(t, isSlug(r.Slug))
			require.True(t, isProjectKey(r.ProjectPingKey))
		}
		switch r.Kind {
		case monitors.PingStart, monitors.PingSuccess, monitors.PingFail, monitors.PingLog, monitors.PingSkip, monitors.PingCancel:
		default:
			t.Fatalf("kind %q", r.Kind)
		}
		if r.ExitCode != nil {
			require.True(t, *r.ExitCode >= 0 && *r.ExitCode <= 255)
			require.Equal(t, *r.ExitCode == 0, r.Kind == monitors.PingSuccess)
		}
		require.True(t, utf8.ValidString(r.RID))
		require.LessOrEqual(t, utf8.RuneCountInString(r.RID), RIDMaxLen)
		for _, c := range r.RID {
			require.True(t, unicode.IsPrint(c))
		}
		require.True(t, r.Attempt >= 0 && r.Attempt <= AttemptMax)
		if r.RetryAt != nil {
			require.Equal(t, monitors.PingFail, r.Kind)
			require.False(t, r.RetryAt.Before(t0.Add(-RetryAtSkew)))
			require.False(t, r.RetryAt.After(t0.Add(RetryMax)))
		}
		if r.DurationMS != nil {
			require.True(t, *r.DurationMS >= 0 && *r.DurationMS <= DurationMax.Milliseconds())
		}
	})
}
