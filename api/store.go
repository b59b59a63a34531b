package api

import (
	"context"
	"time"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Store is what the API needs of the store: what a person changes (through
// [manage.Store]), what it reads, and the collector's counts.
type Store interface {
	manage.Store
	CollectorStore
	monitors.MaintenanceStore
	monitors.StatusPageStore
	APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error)
	APIKeyTouch(ctx context.Context, p *monitors.APIKeyTouchParams) error
	ChannelDelete(ctx context.Context, projectID, id string) error
	ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error)
	ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error)
	IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error)
	IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error)
	IncidentList(ctx context.Context, p *monitors.IncidentListParams) ([]*monitors.Incident, error)
	MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error)
	MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error)
	MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error)
	MonitorPersonFields(ctx context.Context, projectID string, ids []string) (map[string][]string, error)
	MonitorRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Monitor, error)
	MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error
	Ping(ctx context.Context) error
	PingCountByMonitor(ctx context.Context, projectID string, ids []string) (map[string]int64, error)
	PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error)
	ProjectBadgeKey(ctx context.Context, projectID string) (string, error)
	ProjectGet(ctx context.Context, id string) (*monitors.Project, error)
	ProjectRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Project, error)
	RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error)
	monitors.UptimeStore
}

// CollectorStore is what the [Collector] reads at each scrape.
type CollectorStore interface {
	MonitorCountByStatus(ctx context.Context, now time.Time) (map[monitors.Status]int64, error)
	IncidentCountByKind(ctx context.Context) ([]monitors.IncidentCount, error)
}
