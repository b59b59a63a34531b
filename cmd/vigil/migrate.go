package main

import (
	"fmt"
	"log/slog"

	"github.com/vigilhq/vigil/server"
)

// migrateCmd runs "vigil migrate [up|status]".
func migrateCmd(env *cmdEnv, args []string) error {
	action := "up"
	if len(args) > 0 && (args[0] == "up" || args[0] == "status") {
		action, args = args[0], args[1:]
	}
	var cfg server.Config
	fs := newFlagSet(env)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: vigil migrate [up|status] [--database URL]")
		fs.PrintDefaults()
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unknown action %q: use up or status", fs.Arg(0))}
	}
	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	switch action {
	case "up":
		store, err := server.OpenStore(env.ctx, cfg.DatabaseURL, logger) // opening migrates
		if err != nil {
			return err
		}
		if err := store.Close(); err != nil {
			return fmt.Errorf("close store: %w", err)
		}
		fmt.Fprintln(env.stdout, "migrations applied")
	case "status":
		st, err := server.MigrationStatus(env.ctx, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		for _, m := range st {
			state := "pending"
			if m.Applied {
				state = "applied " + m.AppliedAt.Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(env.stdout, "%-30s %s\n", m.Name, state)
		}
	}
	return nil
}
