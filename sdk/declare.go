package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/vigilhq/vigil/sdk/retry"
)

// Schedule is when a monitor expects its job: a cron expression in a time
// zone, or a fixed interval. See PROTOCOL.md §2.
type Schedule struct {
	// Kind is "cron" or "interval".
	Kind string `json:"kind"`
	// Expr is the cron expression: 5 fields, 6 with seconds first, or a
	// descriptor such as "@hourly".
	Expr string `json:"expr,omitempty"`
	// TZ is an IANA time zone (default UTC).
	TZ string `json:"tz,omitempty"`
	// EverySeconds is the interval of an "interval" schedule.
	EverySeconds int64 `json:"every_seconds,omitempty"`
	// Dialect says whose reading of a cron Expr Vigil follows: "cronie"
	// (the default), "robfig" (robfig/cron, gocron, River) or "quartz".
	// Schedulers disagree about syntax and about daylight saving changes,
	// so a monitor must read the expression as the job's scheduler does.
	Dialect string `json:"dialect,omitempty"`
}

// Cron returns a cron schedule; tz may be empty for UTC.
func Cron(expr, tz string) *Schedule {
	return &Schedule{Kind: "cron", Expr: expr, TZ: tz}
}

// Every returns an interval schedule, in whole seconds rounded up.
func Every(d time.Duration) *Schedule {
	return &Schedule{Kind: "interval", EverySeconds: ceilSeconds(d)}
}

// RetryPolicySpec describes a job's retry policy to Vigil, so it knows how
// long to wait for an announced retry and when an occurrence is over.
type RetryPolicySpec struct {
	// Name names the policy, such as "hangfire-default".
	Name string `json:"name"`
	// MaxRetries is the number of retries after the first execution.
	MaxRetries int `json:"max_retries"`
	// MaxDelaysSeconds is the worst-case wait before retry 1, …, N.
	MaxDelaysSeconds []int64 `json:"max_delays_seconds"`
}

// RetrySpec describes p for a declaration; nil for a nil policy.
func RetrySpec(p retry.Policy) *RetryPolicySpec {
	if p == nil {
		return nil
	}
	spec := &RetryPolicySpec{Name: p.Name(), MaxRetries: p.MaxRetries(), MaxDelaysSeconds: []int64{}}
	for _, d := range p.MaxDelays() {
		spec.MaxDelaysSeconds = append(spec.MaxDelaysSeconds, ceilSeconds(d))
	}
	return spec
}

// MonitorSpec is a monitor as a source declares it, with the monitor fields
// of PROTOCOL.md §2. Zero values are left out, so Vigil applies its
// defaults. Slug is required and unique within a source.
type MonitorSpec struct {
	Name              string    `json:"name,omitempty"`
	Slug              string    `json:"slug"`
	Tags              []string  `json:"tags,omitempty"`
	Schedule          *Schedule `json:"schedule,omitempty"`
	GraceSeconds      int64     `json:"grace_seconds,omitempty"`
	MaxRuntimeSeconds int64     `json:"max_runtime_seconds,omitempty"`
	DeadlineSeconds   int64     `json:"deadline_seconds,omitempty"`
	AlertOnFailure    string    `json:"alert_on_failure,omitempty"` // final, every_attempt or never
	FailureThreshold  int       `json:"failure_threshold,omitempty"`
	RecoveryThreshold int       `json:"recovery_threshold,omitempty"`
	Overlap           string    `json:"overlap,omitempty"` // alert or ignore
	// MinRuntimeSeconds, EarlySeconds and TooOften are the run rules,
	// each off when zero: a success quicker than MinRuntimeSeconds is
	// too_fast, a run that starts more than EarlySeconds before its time
	// is early (cron only), and with TooOften "alert" a second success for
	// one occurrence is too_often.
	MinRuntimeSeconds int64            `json:"min_runtime_seconds,omitempty"`
	EarlySeconds      int64            `json:"early_seconds,omitempty"`
	TooOften          string           `json:"too_often,omitempty"` // alert or ignore
	Channels          []string         `json:"channels,omitempty"`
	RetryPolicy       *RetryPolicySpec `json:"retry_policy,omitempty"`
	// NotifyOutput, when false, keeps the tail of a failing run's output
	// out of the monitor's notifications; nil is Vigil's default (true).
	NotifyOutput *bool `json:"notify_output,omitempty"`
	// DependsOn are the monitors it depends on, by slug or ID (see
	// [Job.DependsOn]).
	DependsOn []string `json:"depends_on,omitempty"`
}

// DeclaredMonitor is a monitor as Vigil returns it from a declaration: the
// declared fields plus those Vigil owns.
type DeclaredMonitor struct {
	MonitorSpec
	ID         string `json:"id"`
	PingKey    string `json:"ping_key"`
	PingURL    string `json:"ping_url"`
	Status     string `json:"status,omitempty"`
	Paused     bool   `json:"paused,omitempty"`
	Source     string `json:"source,omitempty"`
	Discovered bool   `json:"discovered,omitempty"`
	// LastPingAt and NextExpectedAt are nil when Vigil sends none.
	LastPingAt     *time.Time `json:"last_ping_at,omitempty"`
	NextExpectedAt *time.Time `json:"next_expected_at,omitempty"`
	// Warnings are Vigil's advice about the monitor's settings: ones that
	// will page for runs that are fine or stay silent about runs that are
	// not, each "field: what goes wrong". [Client.Declare] logs each once.
	Warnings []string `json:"warnings,omitempty"`
}

// Monitor addresses the declared monitor by its ping URL (or, failing
// that, its ping key).
func (d DeclaredMonitor) Monitor() Monitor {
	if d.PingURL != "" {
		return PingURL(d.PingURL)
	}
	if d.PingKey != "" {
		return Key(d.PingKey)
	}
	return Monitor{}
}

// Declare sends the complete set of monitors of source: PUT
// /api/v1/sources/{source}/monitors with {"monitors": [...]}. Vigil creates
// the new ones, updates the changed ones and marks those missing from the
// set as undeclared (not watched, history kept). It needs an API key
// ([WithAPIKey]) and returns the monitors as Vigil stored them, in Vigil's
// order. Vigil's advice about a monitor's settings ([DeclaredMonitor]'s
// Warnings) is logged at warning level, each warning once per process,
// and so is advice in the answers to pings.
func (c *Client) Declare(ctx context.Context, source string, monitors []MonitorSpec) ([]DeclaredMonitor, error) {
	if source == "" {
		return nil, fmt.Errorf("declare monitors: %w", invalidf("empty source"))
	}
	if c.apiKey == "" {
		return nil, fmt.Errorf("declare monitors of %s: %w", source, invalidf("no API key (WithAPIKey)"))
	}
	seen := make(map[string]bool, len(monitors))
	for i, m := range monitors {
		if m.Slug == "" {
			return nil, fmt.Errorf("declare monitors of %s: %w", source, invalidf("monitors[%d]: empty slug", i))
		}
		if seen[m.Slug] {
			return nil, fmt.Errorf("declare monitors of %s: %w", source, invalidf("monitors[%d]: slug %q declared twice", i, m.Slug))
		}
		seen[m.Slug] = true
	}
	if monitors == nil {
		monitors = []MonitorSpec{}
	}
	body, err := json.Marshal(struct {
		Monitors []MonitorSpec `json:"monitors"`
	}{monitors})
	if err != nil {
		return nil, fmt.Errorf("declare monitors of %s: encode: %w", source, err)
	}
	u, err := c.endpoint("/api/v1/sources/" + url.PathEscape(source) + "/monitors")
	if err != nil {
		return nil, fmt.Errorf("declare monitors of %s: %w", source, err)
	}
	resp, err := c.do(ctx, request{method: http.MethodPut, url: u, body: body, ctype: "application/json", auth: true})
	if err != nil {
		return nil, fmt.Errorf("declare monitors of %s: %w", source, err)
	}
	var out struct {
		Monitors []DeclaredMonitor `json:"monitors"`
	}
	if err := json.Unmarshal(resp.body, &out); err != nil {
		return nil, fmt.Errorf("declare monitors of %s: %w: decode answer: %v", source, ErrUnavailable, err)
	}
	for _, d := range out.Monitors {
		c.warn(d.Monitor().address(), "slug "+d.Slug, d.Warnings)
	}
	return out.Monitors, nil
}

const (
	// DeclareIntervalDefault is how often a [Source] declares its set again.
	DeclareIntervalDefault = 15 * time.Minute
	// DeclareRetryDefault is how soon a [Source] tries again after a
	// declaration failed.
	DeclareRetryDefault = time.Minute
)

// A Source is the set of monitors one application or scheduler declares.
// Integrations add a spec for each job they register, declare the set at
// start-up and again periodically ([Source.Run]), and look up each job's
// declared monitor before pinging it. It is safe for concurrent use.
type Source struct {
	c          *Client
	name       string
	interval   time.Duration
	retryAfter time.Duration
	projectKey string

	mu       sync.Mutex
	specs    map[string]MonitorSpec
	declared map[string]Monitor
}

// A SourceOption configures a [Source].
type SourceOption func(*Source)

// WithDeclareInterval sets how often the set is declared again (default
// [DeclareIntervalDefault]).
func WithDeclareInterval(d time.Duration) SourceOption {
	return func(s *Source) {
		if d > 0 {
			s.interval = d
		}
	}
}

// WithProjectPingKey lets the source ping its monitors by project ping key
// and slug until a declaration has returned their ping URLs, so runs are
// reported even while the declaration fails.
func WithProjectPingKey(key string) SourceOption {
	return func(s *Source) { s.projectKey = key }
}

// Source returns an empty set of monitors for source name.
func (c *Client) Source(name string, opts ...SourceOption) *Source {
	s := &Source{
		c: c, name: name,
		interval: DeclareIntervalDefault, retryAfter: DeclareRetryDefault,
		specs: map[string]MonitorSpec{}, declared: map[string]Monitor{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client is the client the source declares and pings with.
func (s *Source) Client() *Client { return s.c }

// Name is the source's name.
func (s *Source) Name() string { return s.name }

// Set adds spec to the set, or replaces the spec with the same slug. The
// change reaches Vigil at the next declaration.
func (s *Source) Set(spec MonitorSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs[spec.Slug] = spec
}

// Remove drops slug from the set; the next declaration marks it as no
// longer discovered.
func (s *Source) Remove(slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.specs, slug)
	delete(s.declared, slug)
}

// Specs returns the set, sorted by slug.
func (s *Source) Specs() []MonitorSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]MonitorSpec, 0, len(s.specs))
	for _, spec := range s.specs {
		out = append(out, spec)
	}
	slices.SortFunc(out, func(a, b MonitorSpec) int {
		if a.Slug < b.Slug {
			return -1
		}
		if a.Slug > b.Slug {
			return 1
		}
		return 0
	})
	return out
}

// Monitor returns the monitor to ping for slug: its declared ping URL, or,
// before any declaration succeeded, the project ping key and slug when the
// source has one ([WithProjectPingKey]). false means neither is known yet.
func (s *Source) Monitor(slug string) (Monitor, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.declared[slug]; ok {
		return m, true
	}
	if s.projectKey != "" {
		if _, ok := s.specs[slug]; ok {
			return Slug(s.projectKey, slug), true
		}
	}
	return Monitor{}, false
}

// Declare sends the whole set once and records the declared ping URLs.
func (s *Source) Declare(ctx context.Context) error {
	specs := s.Specs()
	declared, err := s.c.Declare(ctx, s.name, specs)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range declared {
		// A spec removed while the request was in flight stays removed.
		if _, ok := s.specs[d.Slug]; ok && !d.Monitor().IsZero() {
			s.declared[d.Slug] = d.Monitor()
		}
	}
	return nil
}

// Run declares the set now and then every interval until ctx is done,
// trying again after a minute ([DeclareRetryDefault]) when a declaration
// fails. Failures are logged. Run returns when ctx is done.
func (s *Source) Run(ctx context.Context) {
	for {
		wait := s.interval
		if err := s.Declare(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.c.logger.WarnContext(ctx, "vigil: declaration failed", "source", s.name, "error", err)
			wait = min(s.retryAfter, s.interval)
		}
		if sleepCtx(ctx, wait) != nil {
			return
		}
	}
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}
