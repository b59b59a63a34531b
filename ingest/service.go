package ingest

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// sweepEvery is how often the rate limiter forgets idle keys.
const sweepEvery = time.Minute

// Service receives pings: it parses and checks each request, limits the
// rate per key, and stores the ping through the group-commit writer,
// answering only once the ping is durable.
type Service struct {
	cfg             Config
	writer          *writer
	limiter         *keyLimiter
	failures        *keyLimiter // per client address, of pings that end in 404 or 400
	clientIP        echo.IPExtractor
	m               *metrics
	bodyLimitHeader []string // the value of Ping-Body-Limit
	// adviser gives each answer's Vigil-Warning headers.
	adviser monitors.Adviser
}

// New returns a Service. Its pings are stored once Run runs.
func New(cfg Config) *Service {
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg, bodyLimitHeader: []string{strconv.FormatInt(cfg.BodyLimit, 10)}}
	s.limiter = newKeyLimiter(cfg.RateLimit, cfg.RateBurst)
	s.failures = newKeyLimiter(cfg.FailureLimit, cfg.FailureBurst)
	var err error
	s.m, err = newMetrics(cfg.Registerer,
		func() float64 { return float64(s.writer.queued()) },
		func() float64 { return float64(s.limiter.size()) })
	if err != nil {
		cfg.Logger.Warn("ingest metrics not registered", "err", err)
	}
	s.writer = newWriter(cfg, s.m)
	s.clientIP = clientIPExtractor(cfg.TrustedProxies)
	return s
}

// Run writes pings until ctx is done, then writes out the pings already
// queued and returns. Stop accepting requests (shut the HTTP server down)
// before ctx is done: a ping that arrives after it is refused with 503.
func (s *Service) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.writer.run(ctx)
	}()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			s.limiter.sweep(s.cfg.NowFunc())
			s.failures.sweep(s.cfg.NowFunc())
		}
	}
}

// clientIPExtractor returns how the client's address is read: the
// connection's address, or, from a trusted proxy, the nearest address in
// X-Forwarded-For that is not a trusted proxy.
func clientIPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	// Echo trusts loopback, link-local and private addresses by default;
	// only the configured ranges are trusted here.
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
