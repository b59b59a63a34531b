package main

import (
	"fmt"

	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/server"
)

// backupCmd runs "vigil backup FILE": an online, consistent copy of the
// SQLite database.
func backupCmd(env *cmdEnv, args []string) error {
	var cfg server.Config
	fs := newFlagSet(env)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: vigil backup [--database PATH] FILE")
		fs.PrintDefaults()
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"name the file to write the copy to: vigil backup FILE"}
	}
	if server.IsPostgresURL(cfg.DatabaseURL) {
		return fmt.Errorf("vigil backup copies a SQLite database; back up PostgreSQL with pg_dump or your PostgreSQL backups (see docs/operations.md, Backups)")
	}
	src, dest := server.SQLitePath(cfg.DatabaseURL), fs.Arg(0)
	if err := sqlitestore.Backup(env.ctx, src, dest); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "backed up %s to %s (integrity checked)\n", src, dest)
	return nil
}
