package sqlitestore

import "database/sql"

// Path returns the file s was opened on.
func Path(s *Store) string { return s.path }

// Writer returns the writer connection, for tests that check what the
// database itself enforces.
func Writer(s *Store) *sql.DB { return s.w }
