package main

import (
	"compress/gzip"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
)

func TestBenchIngest(t *testing.T) {
	t.Parallel()
	code, out, errOut := runVigil(t, nil, "bench", "ingest", "--monitors", "20", "--connections", "8",
		"--duration", "400ms", "--warmup", "100ms")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "SQLite, 20 monitors, 8 connections, flat out")
	for _, run := range []string{`group commit \(batch 500, window 2ms\)`, "one transaction per ping", `group commit at \d+ pings/s \(half\)`} {
		require.Regexp(t, regexp.MustCompile(run+`\s+[1-9]\d*\s+\d+\.\dms`), out, "a line for %s with a rate", run)
	}
	require.Regexp(t, `group commit / one transaction per ping: \d+\.\dx`, out)
	require.Regexp(t, `no-op HTTP server \(200 "OK"\)\s+[1-9]\d*\s+\d+\.\dms`, out, "a line for the no-op server with a rate")
	require.Regexp(t, `group commit / no-op HTTP server: \d\.\d{3}`, out)
	require.NotContains(t, out, "answers other than 200")

	// The CPU of the server under test, per acknowledged ping, for every
	// run; SQLite's is in Vigil's process.
	for _, run := range []string{`group commit \(batch 500, window 2ms\)`, "one transaction per ping", `group commit at \d+ pings/s \(half\)`} {
		m := regexp.MustCompile(run + `\s.*\s(\S+)µs\s+in Vigil's\n`).FindStringSubmatch(out)
		require.NotNil(t, m, "a CPU per ping for %s in:\n%s", run, out)
		requirePlausibleCPU(t, m[1])
	}
	m := regexp.MustCompile(`no-op HTTP server \(200 "OK"\)\s.*\s(\S+)µs\s+-\n`).FindStringSubmatch(out)
	require.NotNil(t, m, "a CPU per request for the no-op server in:\n%s", out)
	requirePlausibleCPU(t, m[1])
	m = regexp.MustCompile(`CPU per acknowledged ping, group commit: (\S+)µs \(Vigil with SQLite in its process\); no-op HTTP server (\S+)µs a request`).FindStringSubmatch(out)
	require.NotNil(t, m, "the CPU per ping line in:\n%s", out)
	requirePlausibleCPU(t, m[1])
	requirePlausibleCPU(t, m[2])
}

// requirePlausibleCPU checks a CPU per ping in µs: a number, finite, more
// than none and less than a second.
func requirePlausibleCPU(t *testing.T, s string) {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	require.False(t, math.IsInf(v, 0) || math.IsNaN(v), "finite: %s", s)
	require.Greater(t, v, 0.0, "CPU per ping")
	require.Less(t, v, 1e6, "CPU per ping under a second")
}

// TestBenchIngestProfile checks that --cpuprofile profiles the server under
// test, in its own process: the load generator is not in the profile.
func TestBenchIngestProfile(t *testing.T) {
	t.Parallel()
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	code, out, errOut := runVigil(t, nil, "bench", "ingest", "--monitors", "20", "--connections", "8",
		"--duration", "300ms", "--warmup", "100ms", "--baseline=false", "--half-rate=false", "--noop=false", "--cpuprofile", prof)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `CPU per acknowledged ping, group commit: \S+µs \(Vigil with SQLite in its process\)\n`, out)
	f, err := os.Open(prof)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "a gzipped pprof profile")
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.NotEmpty(t, raw)
	require.NotContains(t, string(raw), "ingestBench", "the load generator runs in the other process")
}

// TestBenchIngestPostgres runs the ingest benchmark small on PostgreSQL,
// with no secret key file given: the bench makes its own.
func TestBenchIngestPostgres(t *testing.T) {
	url := testdb.PostgresURL(t)
	code, out, errOut := runVigil(t, nil, "bench", "ingest", "--database", url, "--monitors", "20",
		"--connections", "8", "--duration", "300ms", "--warmup", "100ms", "--baseline=false", "--half-rate=false")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `group commit \(batch 500, window 2ms\)\s+[1-9]\d*\s+\d+\.\dms`, out)
	require.Regexp(t, `group commit / no-op HTTP server: \d\.\d{3}`, out)
	// Vigil's CPU and its PostgreSQL backends', per acknowledged ping.
	m := regexp.MustCompile(`group commit \(batch 500, window 2ms\)\s.*\s(\S+)µs\s+(\S+)µs\n`).FindStringSubmatch(out)
	require.NotNil(t, m, "CPU per ping of Vigil and PostgreSQL in:\n%s", out)
	requirePlausibleCPU(t, m[1])
	requirePlausibleCPU(t, m[2])
	m = regexp.MustCompile(`CPU per acknowledged ping, group commit: (\S+)µs \(Vigil (\S+)µs \+ PostgreSQL's backends (\S+)µs\); no-op HTTP server (\S+)µs a request`).FindStringSubmatch(out)
	require.NotNil(t, m, "the CPU per ping line in:\n%s", out)
	for _, v := range m[1:] {
		requirePlausibleCPU(t, v)
	}
	require.NotContains(t, out, "not measured")
}

func TestBenchIngestUsage(t *testing.T) {
	t.Parallel()
	code, _, errOut := runVigil(t, nil, "bench", "egress")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "vigil bench ingest")
	code, _, errOut = runVigil(t, nil, "bench", "ingest", "--monitors", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "must be positive")
}

// TestBenchRetention runs the retention benchmark small, on PostgreSQL:
// both schemes remove the same oldest month, the partitions leave no dead
// rows and the single table does.
func TestBenchRetention(t *testing.T) {
	url := testdb.PostgresURL(t)
	args := []string{"bench", "retention", "--database", url, "--pings", "30000", "--monitors", "50",
		"--months", "3", "--queries", "20"}
	// A second run on the same database at the same time, as when two
	// checkouts test at once, must not touch the first one's schemas.
	other := make(chan string, 1)
	go func() {
		code, _, errOut := runVigil(t, nil, args...)
		if code != 0 {
			other <- errOut
		}
		close(other)
	}()
	code, out, errOut := runVigil(t, nil, args...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, <-other, "the run beside it failed")
	line := func(scheme string) []string {
		m := regexp.MustCompile(`(?m)^` + scheme + `\s+\d+MiB\s+\S+\s+(\d+)\s`).FindStringSubmatch(out)
		require.NotNil(t, m, "a result line for %s in:\n%s", scheme, out)
		return m
	}
	removed := line("partitioned")[1]
	require.Equal(t, removed, line("single")[1], "both remove the same month")
	n, err := strconv.Atoi(removed)
	require.NoError(t, err)
	now := time.Now().UTC()
	start := time.Date(now.Year(), now.Month()+2, 1, 0, 0, 0, 0, time.UTC)
	share := float64(start.AddDate(0, 1, 0).Sub(start)) / float64(start.AddDate(0, 3, 0).Sub(start))
	require.InDelta(t, 30_000*share, n, 2, "the first month of three")
	dead := func(scheme string) int {
		m := regexp.MustCompile(`(?m)^` + scheme + `\s+.*ms\s+(\d+)$`).FindStringSubmatch(out)
		require.NotNil(t, m, "a history line for %s in:\n%s", scheme, out)
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		return n
	}
	require.Zero(t, dead("partitioned"), "dropping a partition leaves no dead rows")
	require.Positive(t, dead("single"), "deleting does")

	code, _, errOut = runVigil(t, nil, "bench", "retention", "--database", "/tmp/x.db")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "must be a postgres:// URL")
}

// TestBenchStatus runs the status page benchmark small: every run serves
// the page (200) and the no-op server's line and the ratios are there.
func TestBenchStatus(t *testing.T) {
	t.Parallel()
	code, out, errOut := runVigil(t, nil, "bench", "status", "--monitors", "5", "--days", "10", "--connections", "4",
		"--duration", "300ms", "--warmup", "100ms")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "SQLite, a page of 5 monitors with 10 days of history, 4 connections")
	require.Regexp(t, `page: [1-9]\d* bytes of HTML, [1-9]\d* gzipped`, out)
	for _, run := range []string{`status page, cached \(TTL 10s\), gzip`, `status page, cached \(TTL 10s\), not compressed`,
		`status page, built at every request, gzip`, `no-op HTTP server \(200 "OK"\)`} {
		require.Regexp(t, regexp.MustCompile(run+`\s+[1-9]\d*\s+\d+\.\dms.*\s0\n`), out, "a line for %s with a rate and no failure", run)
	}
	require.Regexp(t, `cached status page / no-op HTTP server: \d\.\d{3}`, out)
	require.Regexp(t, `cached / built at every request: \d+\.\dx`, out)
	require.NotContains(t, out, "answers other than 200")
}
