package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOnCalendarNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		// The example of issue 12: Friday in CET, Monday in CEST.
		{"weekdays across the spring change", []string{"Mon..Fri 02:30", "--tz", "Europe/Berlin", "--from", "2026-03-27T00:00:00+01:00", "-n", "2"},
			[]string{"2026-03-27T02:30:00+01:00", "2026-03-30T02:30:00+02:00"}},
		{"spring gap skipped, as systemd does", []string{"*-*-* 02:30", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "-n", "2"},
			[]string{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{"autumn repeated 01:30 elapses once", []string{"01:30", "--tz", "America/New_York", "--from", "2026-10-31T12:00:00-04:00", "-n", "2"},
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"a running timer never reaches the repeated reading", []string{"*-*-* 01:59:59", "--tz", "America/New_York", "--from", "2026-11-01T01:00:00-05:00", "-n", "2"},
			[]string{"2026-11-02T01:59:59-05:00", "2026-11-03T01:59:59-05:00"}},
		{"every 20 minutes skips the repeated hour", []string{"*:0/20", "--tz", "Europe/Berlin", "--from", "2026-10-25T02:30:00+02:00", "-n", "3"},
			[]string{"2026-10-25T02:40:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T03:20:00+01:00"}},
		{"a zone in the expression wins over --tz", []string{"--tz", "Europe/Berlin", "-n", "1", "--from", "2026-01-01T00:00:00Z", "daily Asia/Kolkata"},
			[]string{"2026-01-02T00:00:00+05:30"}},
		{"last day of the month", []string{"*-*~01 02:30", "--from", "2026-02-01T00:00:00Z", "-n", "2"},
			[]string{"2026-02-28T02:30:00Z", "2026-03-31T02:30:00Z"}},
		{"every 15 minutes", []string{"*-*-* *:00/15:00", "--from", "2026-01-01T00:00:00Z", "-n", "2"},
			[]string{"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runVigil(t, nil, append([]string{"oncalendar", "next"}, tt.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, strings.Join(tt.want, "\n")+"\n", out)
		})
	}
}

func TestOnCalendarNextRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"*-02-30"}, "never elapses"},
		{[]string{"Mon..Fri 25:00"}, "hour 25 is out of range"},
		{[]string{"*:*/15"}, "* takes no repetition"},
		{[]string{"daily", "--tz", "Mars/Olympus"}, `unknown time zone "Mars/Olympus"`},
		{[]string{"daily", "--from", "yesterday"}, "RFC 3339"},
		{[]string{"daily", "-n", "0"}, "-n must be between 1 and 10000"},
		{[]string{"2026-01-01", "--from", "2026-06-01T00:00:00Z"}, "elapses no more"},
		{[]string{}, "exactly one expression"},
	} {
		code, out, errOut := runVigil(t, nil, append([]string{"oncalendar", "next"}, tt.args...)...)
		require.NotEqual(t, 0, code, "args %q", tt.args)
		require.Empty(t, out, "args %q", tt.args)
		require.Contains(t, errOut, tt.want, "args %q", tt.args)
	}
	code, _, errOut := runVigil(t, nil, "oncalendar")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "usage: vigil oncalendar next EXPR")
}
