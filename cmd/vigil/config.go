package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/server"
)

// setting is one configuration value: an environment variable and a flag.
// The environment sets it, a flag overrides it, and the README's table
// lists every one (a test keeps them in step).
type setting struct {
	env, flag string
	def       string
	usage     string
	set       func(string) error
}

func stringSetting(p *string) func(string) error {
	return func(s string) error { *p = s; return nil }
}

func boolSetting(p *bool) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		*p = v
		return nil
	}
}

func intSetting(p *int, lo, hi int) func(string) error {
	return func(s string) error {
		v, err := strconv.Atoi(s)
		if err != nil || v < lo || v > hi {
			return fmt.Errorf("%q is not a whole number between %d and %d", s, lo, hi)
		}
		*p = v
		return nil
	}
}

func durationSetting(p *time.Duration, lo, hi time.Duration) func(string) error {
	return func(s string) error {
		v, err := time.ParseDuration(s)
		if err != nil || v < lo || v > hi {
			return fmt.Errorf("%q is not a duration (such as 500ms, 10s, 5m) between %s and %s", s, lo, hi)
		}
		*p = v
		return nil
	}
}

// daysSetting parses a number of days ("400d") or a Go duration.
func daysSetting(p *time.Duration, lo, hi time.Duration) func(string) error {
	return func(s string) error {
		bad := fmt.Errorf("%q is not a number of days (such as 400d) or a duration (such as 72h) between %s and %s", s, lo, hi)
		var v time.Duration
		if n, ok := strings.CutSuffix(s, "d"); ok {
			days, err := strconv.Atoi(n)
			if err != nil || days < 0 || days > int(hi/(24*time.Hour)) {
				return bad
			}
			v = time.Duration(days) * 24 * time.Hour
		} else {
			d, err := time.ParseDuration(s)
			if err != nil {
				return bad
			}
			v = d
		}
		if v < lo || v > hi {
			return bad
		}
		*p = v
		return nil
	}
}

func allowedTargetsSetting(p *notifiers.AllowedTargets) func(string) error {
	return func(s string) error {
		v, err := notifiers.ParseAllowedTargets(s)
		if err != nil {
			return err
		}
		*p = v
		return nil
	}
}

// serverSettings lists the settings of "vigil serve".
func serverSettings(c *server.Config) []setting {
	core := []setting{
		{"VIGIL_DATABASE_URL", "database", "./vigil.db", "postgres:// URL, or a SQLite file path", stringSetting(&c.DatabaseURL)},
		{"VIGIL_SECRET_KEY_FILE", "secret-key-file", "", "file of the keys that encrypt channel secrets in the database (default: beside a SQLite database, its name + .key, made on first start; required with PostgreSQL)", stringSetting(&c.SecretKeyFile)},
		{"VIGIL_LISTEN", "listen", "127.0.0.1:8080", "address to serve on", stringSetting(&c.Listen)},
		{"VIGIL_BASE_URL", "base-url", "", "public URL of this Vigil, used in ping URLs, links and messages (default: http:// + the listen address)", stringSetting(&c.BaseURL)},
		{"VIGIL_ALLOW_PRIVATE_TARGETS", "allow-private-targets", "false", "let channels reach loopback and private addresses", boolSetting(&c.Delivery.AllowPrivate)},
		{"VIGIL_ALLOWED_TARGETS", "allowed-targets", "", "comma-separated CIDRs, addresses and host names channels may reach even when private targets are refused", allowedTargetsSetting(&c.Delivery.AllowedTargets)},
		{"VIGIL_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", stringSetting(&c.LogLevel)},
		{"VIGIL_LOG_FORMAT", "log-format", "text", "text or json", stringSetting(&c.LogFormat)},
		{"VIGIL_KEEP_PINGS", "keep-pings", "1000", "pings kept per monitor; older ones are pruned", intSetting(&c.KeepPings, 10, 10_000_000)},
		{"VIGIL_KEEP_RUNS", "keep-runs", "1000", "runs kept per monitor; older ones are pruned", intSetting(&c.KeepRuns, 10, 10_000_000)},
		{"VIGIL_PRUNE_INTERVAL", "prune-interval", "10m", "how often old pings, runs and incidents are pruned", durationSetting(&c.PruneInterval, time.Second, 24*time.Hour)},
		{"VIGIL_KEEP_HISTORY", "keep-history", "400d", "how long resolved incidents, with their events, deliveries and attempts, and pings are kept (days: 400d, or a duration: 72h)", daysSetting(&c.KeepHistory, time.Hour, 100*365*24*time.Hour)},
		{"VIGIL_MAX_MONITORS_PER_PROJECT", "max-monitors-per-project", "10000", "most monitors one project may have, however they are created", intSetting(&c.MaxMonitorsPerProject, 1, 100_000_000)},
		{"VIGIL_SHUTDOWN_TIMEOUT", "shutdown-timeout", "20s", "longest shutdown after SIGTERM: in-flight pings are answered, claims and deliveries finished or handed back", durationSetting(&c.ShutdownTimeout, time.Second, 10*time.Minute)},
		{"VIGIL_DB_MAX_CONNS", "db-max-conns", "0", "PostgreSQL connections this process may open; 0 sizes the pool from its parts (20 with the defaults)", intSetting(&c.Database.MaxConns, 0, 10_000)},
		{"VIGIL_ALLOW_ASYNC_COMMIT", "allow-async-commit", "false", "start on a PostgreSQL with synchronous_commit or fsync off, where an acknowledged ping can be lost", boolSetting(&c.Database.AllowAsyncCommit)},
	}
	core = append(core, ingestSettings(&c.Ingest)...)
	core = append(core, evaluatorSettings(&c.Evaluator)...)
	core = append(core, apiSettings(&c.API)...)
	core = append(core, deliverySettings(&c.Delivery)...)
	core = append(core, webSettings(&c.Web)...)
	return core
}

// databaseSettings lists the settings of commands that only open the
// database: where it is, and the key file of its channel secrets.
func databaseSettings(c *server.Config) []setting {
	return serverSettings(c)[:2]
}

// parseSettings applies defaults, then the environment, then the flags of
// args. All problems are reported together.
func parseSettings(env *cmdEnv, fs *flag.FlagSet, settings []setting, args []string) error {
	var errs []error
	for _, s := range settings {
		if err := s.set(s.def); err != nil {
			return fmt.Errorf("default of %s: %w", s.env, err) // a bug in the table
		}
		if v := env.getenv(s.env); v != "" {
			if err := s.set(strings.TrimSpace(v)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.env, err))
			}
		}
		help := fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def)
		if strings.HasPrefix(s.env, "VIGIL_ALLOW_") {
			// A bare --allow-... turns it on.
			fs.BoolFunc(s.flag, help, s.set)
		} else {
			fs.Func(s.flag, help, s.set)
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	return errors.Join(errs...)
}

// newFlagSet returns a flag set that reports to the command's stderr.
func newFlagSet(env *cmdEnv) *flag.FlagSet {
	fs := flag.NewFlagSet("vigil", flag.ContinueOnError)
	if env.stderr != nil {
		fs.SetOutput(env.stderr)
	} else {
		fs.SetOutput(io.Discard)
	}
	return fs
}
