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
