package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Pool returns the store's pool, for tests that reopen a store on the same
// database or check what the database itself enforces.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// PingPartitions lists the partitions of pings by name, with the exclusive
// upper bound of each (zero for the default partition).
func PingPartitions(ctx context.Context, s *Store) (map[string]time.Time, error) {
	parts, err := s.pingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	got := make(map[string]time.Time, len(parts))
	for _, p := range parts {
		var upper time.Time
		if p.upper != nil {
			upper = p.upper.UTC()
		}
		got[p.name] = upper
	}
	return got, nil
}
