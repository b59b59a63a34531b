package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIngestWriters checks how many batches of pings are written at once:
// what the configuration says, else one on either database (on
// PostgreSQL, larger batches from one writer cost less per ping).
func TestIngestWriters(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"postgres://u@host/db", "postgresql://u@host/db", "/var/lib/vigil/vigil.db", ""} {
		c := &Config{DatabaseURL: url}
		require.Equal(t, 1, c.ingestWriters(), url)
		c.Ingest.Writers = 3
		require.Equal(t, 3, c.ingestWriters(), url)
	}
}

// TestIngestQuietCut checks that a batch's wait is cut when its pings stop
// coming on SQLite, and not on PostgreSQL, where smaller batches cost more.
func TestIngestQuietCut(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{"postgres://u@host/db": false, "postgresql://u@host/db": false,
		"/var/lib/vigil/vigil.db": true, "": true} {
		c := &Config{DatabaseURL: url}
		require.Equal(t, want, c.ingestQuietCut(), url)
	}
}
