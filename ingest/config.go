package ingest

import (
	"cmp"
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/monitors"
)

// Defaults of Config.
const (
	// BodyLimitDefault is how many bytes of a ping's body are kept: 100 KB.
	BodyLimitDefault = 100_000
	// BodyHardLimitDefault is the body size past which a ping is refused
	// with 413 instead of cut: 10 MiB. It is raised to the body limit when
	// that is larger.
	BodyHardLimitDefault = 10 << 20
	// BatchSizeDefault is the most pings written in one transaction.
	BatchSizeDefault = 500
	// BatchWindowDefault is the window "vigil serve" uses: how long the
	// writer waits for more pings after the first of a batch, when fewer
	// than a batch are waiting.
	BatchWindowDefault = 2 * time.Millisecond
	// WritersDefault is how many batches may be written at once.
	WritersDefault = 1
	// BatchTimeoutDefault bounds the writing of one batch.
	BatchTimeoutDefault = 30 * time.Second
	// FailureLimitDefault is how many pings per second, on average, one
	// client address may send that end in 404 or 400.
	FailureLimitDefault = 1.0
	// FailureBurstDefault is how many such pings it may send at once.
	FailureBurstDefault = 60
)

// Store is what ingest needs of the store: one call that records a batch of
// pings, each through the state machine, in one transaction.
type Store interface {
	PingRecordBatch(ctx context.Context, p *monitors.PingRecordBatchParams) ([]monitors.PingRecordResult, error)
}

// Config configures a Service. Zero values take the defaults above, except
// where a field says otherwise.
type Config struct {
	Store Store

	// BodyLimit is how many bytes of a request body are kept with the ping;
	// the rest is dropped and the ping flagged as truncated. It is sent to
	// clients in the Ping-Body-Limit header.
	BodyLimit int64
	// BodyHardLimit is the body size past which a ping is refused (413).
	BodyHardLimit int64

	// BatchSize is the most pings written in one transaction. 1 turns group
	// commit off: each ping is written in its own transaction by the
	// request that carries it, as it arrives.
	BatchSize int
	// BatchWindow is how long a batch waits for more pings after its first
	// one, when fewer than BatchSize are queued; 0 takes what is queued
	// without waiting. Pings that queue while a batch is being written go
	// into the next one, which, without QuietCut, is written as soon as
	// that batch is done: they have waited for a write already, and the
	// window only gathers company for a ping that finds the writer idle.
	BatchWindow time.Duration
	// QuietCut stops a batch's wait early, once no ping has arrived for a
	// sixteenth of BatchWindow; with it, a batch of pings queued while the
	// one before was written waits for that quiet too. The server turns it
	// on for SQLite, where a batch's fixed cost is small (a commit appends
	// to the WAL, with no fsync to share), and leaves it off on
	// PostgreSQL, where the smaller batches cost more CPU per ping than the
	// shorter wait gains and a batch of queued pings that goes at once
	// raised the flat-out rate by half (docs/benchmarks.md, Ingest, seventh
	// and ninth rounds).
	QuietCut bool
	// Writers is how many batches may be in flight at once. Pings are
	// spread over the writers by monitor key, so the pings of one key
	// always go through the same writer, in arrival order.
	Writers int
	// BatchTimeout bounds the writing of one batch.
	BatchTimeout time.Duration

	// RateLimit is how many pings per second one key (a ping key, or a
	// project ping key and slug) may send, on average; past it and its
	// burst, pings are refused with 429 and Retry-After. 0 or less: no
	// limit.
	RateLimit float64
	// RateBurst is how many pings one key may send at once above the rate;
	// at least 1.
	RateBurst int

	// FailureLimit is how many pings per second one client address may
	// send, on average, that end in 404 (no such key) or 400 (a bad URL or
	// query); past it and FailureBurst, every ping from that address is
	// refused with 429 and Retry-After, before any database work, until
	// the bucket refills. A made-up key is thus not a free database
	// lookup. 0 is FailureLimitDefault; below 0, no limit.
	FailureLimit float64
	// FailureBurst is how many failed pings one address may send at once;
	// 0 is FailureBurstDefault.
	FailureBurst int

	// TrustedProxies are the addresses whose X-Forwarded-For header is
	// believed. The client's address is the nearest one in that header
	// that is not a trusted proxy. Empty: the header is ignored.
	TrustedProxies []netip.Prefix

	// Registerer, when set, receives the ingest metrics.
	Registerer prometheus.Registerer
	// Logger receives the ingest log; nil discards it.
	Logger *slog.Logger
	// NowFunc is the clock; nil is time.Now.
	NowFunc func() time.Time
}

// withDefaults returns c with the defaults filled in.
func (c Config) withDefaults() Config {
	if c.BodyLimit <= 0 {
		c.BodyLimit = BodyLimitDefault
	}
	if c.BodyHardLimit <= 0 {
		c.BodyHardLimit = BodyHardLimitDefault
	}
	c.BodyHardLimit = max(c.BodyHardLimit, c.BodyLimit)
	c.BatchSize = cmp.Or(max(c.BatchSize, 0), BatchSizeDefault)
	if c.BatchWindow < 0 {
		c.BatchWindow = 0
	}
	c.Writers = cmp.Or(max(c.Writers, 0), WritersDefault)
	c.BatchTimeout = cmp.Or(max(c.BatchTimeout, 0), BatchTimeoutDefault)
	c.RateBurst = max(c.RateBurst, 1)
	if c.FailureLimit == 0 {
		c.FailureLimit = FailureLimitDefault
	}
	c.FailureBurst = cmp.Or(max(c.FailureBurst, 0), FailureBurstDefault)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.NowFunc == nil {
		c.NowFunc = time.Now
	}
	return c
}
