package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/vigilhq/vigil/internal/gcpacing"
	"github.com/vigilhq/vigil/server"
)

// newLogger builds the process logger from the configuration.
func newLogger(w io.Writer, cfg *server.Config) (*slog.Logger, error) {
	level, err := server.ParseLogLevel(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// serveCmd runs "vigil serve".
func serveCmd(env *cmdEnv, args []string) error {
	var cfg server.Config
	fs := newFlagSet(env)
	if err := parseSettings(env, fs, serverSettings(&cfg), args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	logger, err := newLogger(env.stderr, &cfg)
	if err != nil {
		return err
	}
	if pct := gcpacing.Apply(env.getenv); pct != 0 {
		logger.Debug("garbage collector paced by the default; GOGC overrides it", "gogc", pct)
	}
	srv, err := server.Start(env.ctx, cfg, logger)
	if err != nil {
		return err
	}
	if b := srv.Bootstrapped; b != nil {
		fmt.Fprintf(env.stdout, `
Vigil created the project %q on this empty database.
Its admin API key is shown only this once; keep it:

    %s

Project ping key (for /ping/<project-ping-key>/<slug> URLs): %s

`, b.Project.Name, b.APIKey, b.Project.PingKey)
	}
	if u := srv.SetupURL(); u != "" {
		fmt.Fprintf(env.stdout, `
This Vigil has no dashboard account yet. Open this link to create the first
one; it works once, until Vigil restarts with a new one (or run
"vigil users create"):

    %s

`, u)
	}
	return srv.Run(env.ctx)
}
