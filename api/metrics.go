package api

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/monitors"
)

// requestMetrics count the API's requests by route and answer.
type requestMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newRequestMetrics(reg prometheus.Registerer) (*requestMetrics, error) {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_api_requests_total",
			Help: "Requests to the management API and badges, by route, method and HTTP status.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vigil_api_request_duration_seconds",
			Help:    "Time to answer a request to the management API or a badge, by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *requestMetrics) observe(r route, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(r.path, r.method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(r.path, r.method).Observe(d.Seconds())
}

// collectTimeout bounds the queries of one scrape.
const collectTimeout = 5 * time.Second

// Collector reads, at each scrape, the monitors by status and the
// incidents by kind from the store. The numbers are the database's, so
// every replica reports the same: aggregate them across replicas with max,
// not sum.
type Collector struct {
	store CollectorStore
	now   func() time.Time
	log   *slog.Logger

	monitors, open, opened, resolved, up *prometheus.Desc
}

// NewCollector returns a Collector on store; now is the clock that decides
// which monitors are late.
func NewCollector(store CollectorStore, now func() time.Time, log *slog.Logger) *Collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Collector{
		store: store, now: now, log: log,
		monitors: prometheus.NewDesc("vigil_monitors", "Monitors by status (late is derived at scrape time).",
			[]string{"status"}, nil),
		open: prometheus.NewDesc("vigil_incidents_open", "Incidents open now, by kind.", []string{"kind"}, nil),
		opened: prometheus.NewDesc("vigil_incidents_opened_total",
			"Incidents opened, by kind, as kept in the database (deleting a monitor deletes its incidents).",
			[]string{"kind"}, nil),
		resolved: prometheus.NewDesc("vigil_incidents_resolved_total",
			"Incidents resolved, by kind, as kept in the database.", []string{"kind"}, nil),
		up: prometheus.NewDesc("vigil_store_scrape_ok",
			"1 when the store answered the queries of this scrape, 0 when it did not.", nil, nil),
	}
}

// Describe sends the descriptions of the metrics.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.monitors, c.open, c.opened, c.resolved, c.up} {
		ch <- d
	}
}

var monitorStatuses = []monitors.Status{monitors.StatusNew, monitors.StatusUp, monitors.StatusRunning,
	monitors.StatusLate, monitors.StatusRetrying, monitors.StatusDown, monitors.StatusPaused, monitors.StatusUndeclared}

// Collect queries the store. When it fails, the scrape reports
// vigil_store_scrape_ok 0 and the store's metrics are left out, rather
// than failing the whole scrape with the other parts' metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	byStatus, err1 := c.store.MonitorCountByStatus(ctx, c.now())
	byKind, err2 := c.store.IncidentCountByKind(ctx)
	if err := errors.Join(err1, err2); err != nil {
		c.log.Warn("metrics: store did not answer", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, st := range monitorStatuses {
		ch <- prometheus.MustNewConstMetric(c.monitors, prometheus.GaugeValue, float64(byStatus[st]), string(st))
	}
	counts := make(map[monitors.IncidentKind]monitors.IncidentCount, len(byKind))
	for _, k := range byKind {
		counts[k.Kind] = k
	}
	for _, kind := range monitors.IncidentKinds {
		k := counts[kind]
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(k.Open), string(kind))
		ch <- prometheus.MustNewConstMetric(c.opened, prometheus.CounterValue, float64(k.Opened), string(kind))
		ch <- prometheus.MustNewConstMetric(c.resolved, prometheus.CounterValue, float64(k.Opened-k.Open), string(kind))
	}
}
