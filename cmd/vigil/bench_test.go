package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.NotContains(t, out, "answers other than 200")
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
