package delivery

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/monitors"
)

// metrics counts delivery attempts by channel kind and outcome.
type metrics struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tests    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_delivery_attempts_total",
			Help: "Delivery attempts of incident events, by channel kind and outcome (success, retry, failed).",
		}, []string{"kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vigil_delivery_attempt_duration_seconds",
			Help:    "How long delivery attempts took, by channel kind.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"kind"}),
		tests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_delivery_test_notifications_total",
			Help: "Test notifications sent from the API, by channel kind and outcome (success, failed).",
		}, []string{"kind", "outcome"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.attempts, err = register(reg, m.attempts); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.tests, err = register(reg, m.tests); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector registered already under
// its name (a service started again on the same registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, fmt.Errorf("register delivery metrics: %w", err)
	}
	return c, nil
}

func (m *metrics) observe(kind string, outcome monitors.AttemptOutcome, d time.Duration) {
	m.attempts.WithLabelValues(kind, string(outcome)).Inc()
	m.duration.WithLabelValues(kind).Observe(d.Seconds())
}

func (m *metrics) observeTest(kind string, outcome monitors.AttemptOutcome) {
	m.tests.WithLabelValues(kind, string(outcome)).Inc()
}
