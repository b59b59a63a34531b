package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/web"
)

// Config is the operator's configuration of a Vigil server.
type Config struct {
	DatabaseURL   string
	Listen        string
	BaseURL       string
	LogLevel      string
	LogFormat     string
	KeepPings     int
	KeepRuns      int
	PruneInterval time.Duration
	// KeepHistory is how long resolved incidents are kept, with their
	// events, deliveries and attempts, and how long pings are kept at most
	// (VIGIL_KEEP_HISTORY); 0 is KeepHistoryDefault.
	KeepHistory time.Duration
	// MaxMonitorsPerProject bounds the monitors of each project
	// (VIGIL_MAX_MONITORS_PER_PROJECT); 0 is
	// monitors.MaxMonitorsPerProjectDefault.
	MaxMonitorsPerProject int
	// ShutdownTimeout bounds a shutdown, from SIGTERM to exit (see
	// Server.Run); 0 is ShutdownTimeoutDefault.
	ShutdownTimeout time.Duration
	// SecretKeyFile is the key file that encrypts channel secrets at rest
	// (VIGIL_SECRET_KEY_FILE); "" is the default beside a SQLite database
	// (see SecretKeyFile), and an error with PostgreSQL.
	SecretKeyFile string
	// Database configures the connection pool and the durability check.
	Database DatabaseSettings

	// HTTPTimeouts bound each request by route; zero values take the
	// defaults (see timeouts.go).
	HTTPTimeouts HTTPTimeouts

	// The settings of each part are the part's own Config: the operator's
	// settings (flags and environment, see cmd/vigil) fill in its fields,
	// and the server the wiring (store, clock, logger, metrics), which it
	// sets whatever they hold here.
	Ingest    ingest.Config
	Evaluator evaluator.Config
	API       api.Config
	Delivery  delivery.Config
	Web       web.Config

	// NowFunc is the clock; nil is time.Now. Tests set it.
	NowFunc func() time.Time
}

// Validate checks c and fills derived defaults (the base URL). All problems
// are reported together.
func (c *Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("database: must not be empty"))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen: %q is not host:port", c.Listen))
	}
	if c.BaseURL == "" {
		c.BaseURL = "http://" + c.Listen
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base URL: %q is not an http or https URL", c.BaseURL))
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if _, err := ParseLogLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log format: %q is not text or json", c.LogFormat))
	}
	if c.KeepPings < 1 || c.KeepRuns < 1 {
		errs = append(errs, errors.New("keep pings and keep runs must be at least 1"))
	}
	if c.PruneInterval <= 0 {
		errs = append(errs, errors.New("prune interval must be positive"))
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("shutdown timeout must not be negative"))
	}
	if c.Database.MaxConns < 0 {
		errs = append(errs, errors.New("database max conns must not be negative"))
	}
	if err := c.Evaluator.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Delivery.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseLogLevel parses debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level: %q is not debug, info, warn or error", s)
	}
	return l, nil
}

// ShutdownTimeoutDefault is how long a shutdown may take: with the exit
// after it, within the 25 s an orchestrator gives before SIGKILL
// (Kubernetes' terminationGracePeriodSeconds is 30 s by default).
const ShutdownTimeoutDefault = 20 * time.Second

func (c *Config) shutdownTimeout() time.Duration {
	if c.ShutdownTimeout > 0 {
		return c.ShutdownTimeout
	}
	return ShutdownTimeoutDefault
}

func (c *Config) now() time.Time {
	if c.NowFunc != nil {
		return c.NowFunc()
	}
	return time.Now()
}
