package ingest

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Ping results, the "result" label of vigil_ingest_pings_total.
const (
	resultOK          = "ok"
	resultCreated     = "created"
	resultNotFound    = "not_found"
	resultBadRequest  = "bad_request"
	resultTooLarge    = "too_large"
	resultRateLimited = "rate_limited"
	resultError       = "error"
	resultLimited     = "limited"
	resultUnavailable = "unavailable"
)

// metrics are the ingest's Prometheus metrics.
type metrics struct {
	pings        *prometheus.CounterVec
	batchSize    prometheus.Histogram
	batchSeconds prometheus.Histogram
	batchErrors  prometheus.Counter
	pingSeconds  prometheus.Histogram
}

// newMetrics makes the metrics and registers them with reg when it is not
// nil. A metric that cannot be registered (a second Service on one
// registry) is reported in the returned error and still counted.
func newMetrics(reg prometheus.Registerer, queued func() float64, limited func() float64) (*metrics, error) {
	m := &metrics{
		pings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_ingest_pings_total",
			Help: "Ping requests by kind (start, success, fail, log, skip, cancel; unknown when the URL could not be read) and result (ok, created, not_found, bad_request, too_large, rate_limited, unavailable, error).",
		}, []string{"kind", "result"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vigil_ingest_batch_size",
			Help:    "Pings written per transaction.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000},
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vigil_ingest_batch_duration_seconds",
			Help:    "Time to write one batch of pings, commit included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5ms to 4s
		}),
		batchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigil_ingest_batch_errors_total",
			Help: "Batches that failed as a whole (their pings are then written apart).",
		}),
		pingSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vigil_ingest_ping_duration_seconds",
			Help:    "Time from receiving a ping request to answering it; for a stored ping, until it is durable.",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16), // 0.25ms to 8s
		}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.pings, m.batchSize, m.batchSeconds, m.batchErrors, m.pingSeconds,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigil_ingest_queued_pings",
			Help: "Pings waiting for a batch.",
		}, queued),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigil_ingest_rate_limited_keys",
			Help: "Keys with a rate-limit bucket in memory (keys that pinged recently).",
		}, limited),
	} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return m, fmt.Errorf("register ingest metrics: %w", err)
	}
	return m, nil
}

func (m *metrics) ping(kind, result string, d time.Duration) {
	if kind == "" {
		kind = "unknown"
	}
	m.pings.WithLabelValues(kind, result).Inc()
	m.pingSeconds.Observe(d.Seconds())
}

func (m *metrics) batch(n int, d time.Duration, err error) {
	m.batchSize.Observe(float64(n))
	m.batchSeconds.Observe(d.Seconds())
	if err != nil {
		m.batchErrors.Inc()
	}
}
