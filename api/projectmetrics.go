package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// monitorLabels label every gauge of /metrics/project/{key}.
var monitorLabels = []string{"id", "name", "slug", "tags"}

var (
	descMonitorUp = prometheus.NewDesc("vigil_monitor_up",
		"1 unless the monitor is down (as Healthchecks' hc_check_up).", monitorLabels, nil)
	descMonitorStarted = prometheus.NewDesc("vigil_monitor_started",
		"1 while the monitor has a run started and not finished.", monitorLabels, nil)
	descMonitorGrace = prometheus.NewDesc("vigil_monitor_grace",
		"1 while the monitor is late: past its expected time, within its grace.", monitorLabels, nil)
	descMonitorPaused = prometheus.NewDesc("vigil_monitor_paused",
		"1 while the monitor is paused.", monitorLabels, nil)
	descMonitorLastPingAge = prometheus.NewDesc("vigil_monitor_last_ping_age_seconds",
		"Seconds since the monitor's last ping; absent when it never pinged.", monitorLabels, nil)
	descMonitorsTotal = prometheus.NewDesc("vigil_project_monitors",
		"Monitors of the project.", nil, nil)
)

// projectCollector is the gauges of one project's monitors at one instant.
type projectCollector struct {
	ms  []*monitors.Monitor
	now time.Time
}

func (p *projectCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMonitorUp, descMonitorStarted, descMonitorGrace, descMonitorPaused,
		descMonitorLastPingAge, descMonitorsTotal} {
		ch <- d
	}
}

func (p *projectCollector) Collect(ch chan<- prometheus.Metric) {
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	ch <- prometheus.MustNewConstMetric(descMonitorsTotal, prometheus.GaugeValue, float64(len(p.ms)))
	for _, m := range p.ms {
		labels := []string{m.ID, m.Name, m.Slug, strings.Join(m.Tags, " ")}
		status := m.StatusAt(p.now)
		ch <- prometheus.MustNewConstMetric(descMonitorUp, prometheus.GaugeValue, bit(status != monitors.StatusDown), labels...)
		ch <- prometheus.MustNewConstMetric(descMonitorStarted, prometheus.GaugeValue, bit(len(m.State.Runs) > 0), labels...)
		ch <- prometheus.MustNewConstMetric(descMonitorGrace, prometheus.GaugeValue, bit(status == monitors.StatusLate), labels...)
		ch <- prometheus.MustNewConstMetric(descMonitorPaused, prometheus.GaugeValue, bit(m.Paused), labels...)
		if !m.State.LastPingAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(descMonitorLastPingAge, prometheus.GaugeValue,
				max(p.now.Sub(m.State.LastPingAt).Seconds(), 0), labels...)
		}
	}
}

// errMetricsKey answers every key /metrics/project/ does not take, alike,
// so keys cannot be probed.
var errMetricsKey = &apiError{status: http.StatusNotFound, msg: "not found"}

// projectMetrics answers GET /metrics/project/{key}: Prometheus gauges of
// every monitor of the project of key, a read-only API key (a key in a URL
// ends up in scrape configs and logs, so a read-write one is refused).
func (h *Handler) projectMetrics(c echo.Context, _ *request) error {
	ctx := c.Request().Context()
	raw := pathParam(c, "key")
	if raw == "" {
		return errMetricsKey
	}
	key, err := h.store.APIKeyGetByHash(ctx, keys.HashAPIKey(raw))
	if errors.Is(err, monitors.ErrNotFound) {
		return errMetricsKey
	}
	if err != nil {
		return err
	}
	if !key.ReadOnly {
		return &apiError{status: http.StatusForbidden,
			msg: "key: /metrics/project/ takes a read-only API key only (this one is read-write); make a read-only key for Prometheus"}
	}
	h.touch(key)
	now := h.now()
	ms, err := h.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: key.ProjectID, Now: now})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(&projectCollector{ms: ms, now: now}); err != nil {
		return err
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}
