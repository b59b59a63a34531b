package main

import (
	"fmt"
	"log/slog"

	"github.com/vigilhq/vigil/server"
)

// migrateCmd runs "vigil migrate [up [--dry-run]|status]".
func migrateCmd(env *cmdEnv, args []string) error {
	action := "up"
	if len(args) > 0 && (args[0] == "up" || args[0] == "status") {
		action, args = args[0], args[1:]
	}
	var cfg server.Config
	fs := newFlagSet(env)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: vigil migrate [up [--dry-run]|status] [--database URL]")
		fs.PrintDefaults()
	}
	dryRun := fs.Bool("dry-run", false, "with up: list the migrations that would be applied, and apply none")
	if err := parseSettings(env, fs, databaseSettings(&cfg), args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unknown action %q: use up or status", fs.Arg(0))}
	}
	if *dryRun && action != "up" {
		return usageError{"--dry-run goes with up"}
	}
	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	switch {
	case action == "up" && *dryRun:
		st, err := server.MigrationStatus(env.ctx, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		n := 0
		for _, m := range st {
			if !m.Applied {
				fmt.Fprintf(env.stdout, "would apply %s\n", m.Name)
				n++
			}
		}
		if n == 0 {
			fmt.Fprintln(env.stdout, "nothing to apply: the database is up to date")
		}
	case action == "up":
		// Opening migrates, and encrypts the channel secrets not yet
		// encrypted under the key file's current key.
		store, _, err := server.OpenSealedStore(env.ctx, cfg.DatabaseURL, cfg.SecretKeyFile, logger)
		if err != nil {
			return err
		}
		if err := store.Close(); err != nil {
			return fmt.Errorf("close store: %w", err)
		}
		fmt.Fprintln(env.stdout, "migrations applied")
	case action == "status":
		st, err := server.MigrationStatus(env.ctx, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		for _, m := range st {
			state := "pending"
			if m.Applied {
				state = "applied"
				if !m.AppliedAt.IsZero() {
					state += " " + m.AppliedAt.Format("2006-01-02T15:04:05Z")
				}
			}
			fmt.Fprintf(env.stdout, "%-30s %s\n", m.Name, state)
		}
	}
	return nil
}
