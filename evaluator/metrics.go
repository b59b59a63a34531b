package evaluator

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the evaluator's Prometheus metrics.
type metrics struct {
	evaluated        prometheus.Counter
	opened           *prometheus.CounterVec
	detectionSeconds prometheus.Histogram
	claimSeconds     prometheus.Histogram
	lagSeconds       prometheus.Gauge
	errors           prometheus.Counter
	outages          prometheus.Counter
	outageSeconds    prometheus.Gauge
	outagePostponed  prometheus.Gauge
	reports          *prometheus.CounterVec
}

func newMetrics() *metrics {
	return &metrics{
		evaluated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigil_evaluator_monitors_evaluated_total",
			Help: "Monitors evaluated by this process's evaluator because a deadline of theirs had come.",
		}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_evaluator_incidents_opened_total",
			Help: "Incidents opened by the passing of time, by kind.",
		}, []string{"kind"}),
		detectionSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vigil_evaluator_detection_latency_seconds",
			Help:    "Time from a monitor's deadline to the commit of the incident it opened.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300},
		}),
		claimSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vigil_evaluator_claim_duration_seconds",
			Help:    "Duration of one claim transaction: lock due monitors, evaluate, write.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 10),
		}),
		lagSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vigil_evaluator_lag_seconds",
			Help: "How far the oldest due deadline of any monitor is behind now, after the last pass or, while a backlog lasts, the last full claim; 0 when none is due.",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigil_evaluator_errors_total",
			Help: "Evaluator passes that failed.",
		}),
		outages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigil_outages_total",
			Help: "Outages of Vigil detected by this process: gaps in the evaluators' heartbeat longer than the outage threshold.",
		}),
		outageSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vigil_outage_last_duration_seconds",
			Help: "Duration of the last outage of Vigil this process detected.",
		}),
		outagePostponed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vigil_outage_last_monitors_postponed",
			Help: "Monitors given a fresh grace window by the last outage this process settled.",
		}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_reports_claimed_total",
			Help: "Reports this process claimed and queued for delivery, by period (weekly, monthly).",
		}, []string{"period"}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.evaluated, m.opened, m.detectionSeconds, m.claimSeconds, m.lagSeconds,
		m.errors, m.outages, m.outageSeconds, m.outagePostponed, m.reports} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("register evaluator metrics: %w", err)
		}
	}
	return nil
}
