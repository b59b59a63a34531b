package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
)

// Backup writes a consistent copy of the Vigil database in the SQLite file
// at path to the new file dest, while Vigil keeps running on it.
//
// It uses VACUUM INTO on a connection of its own: the copy is one read
// transaction, so it is the database as of one instant, and in WAL mode
// it does not stop the writer (pings keep being stored meanwhile; they
// are not in the copy if they were committed after it began). The copy
// is compacted, and checked with PRAGMA integrity_check before Backup
// returns. It refuses a dest that exists, and a path that does not. The
// copy is created 0600, as the database is.
func Backup(ctx context.Context, path, dest string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("back up %s: %w", path, err)
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("back up to %s: the file exists; remove it or name another", dest)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("back up to %s: %w", dest, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("back up %s: %w", path, err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'`).Scan(&tables); err != nil {
		return fmt.Errorf("back up %s: %w", path, err)
	}
	if tables == 0 {
		return fmt.Errorf("back up %s: not a Vigil database (it has no migrations)", path)
	}
	// The copy holds what the database does: create it readable by its
	// owner only (VACUUM INTO writes into an empty file it is given).
	if err := createPrivate(dest); err != nil {
		return fmt.Errorf("back up to %s: %w", dest, err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		_ = os.Remove(dest)
		return fmt.Errorf("back up %s to %s: %w", path, dest, err)
	}
	if err := integrityCheck(ctx, dest); err != nil {
		return fmt.Errorf("back up %s to %s: the copy: %w", path, dest, err)
	}
	return nil
}

// integrityCheck runs PRAGMA integrity_check on the SQLite file at path.
func integrityCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	return nil
}
