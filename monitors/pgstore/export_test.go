package pgstore

import "github.com/jackc/pgx/v5/pgxpool"

// Pool returns the store's pool, for tests that reopen a store on the same
// database or check what the database itself enforces.
func Pool(s *Store) *pgxpool.Pool { return s.pool }
