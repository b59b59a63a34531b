package web

import (
	"context"
	"time"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Store is what the dashboard needs of the store: what a person changes
// (through [manage.Store]), accounts and sessions, and what its pages read.
type Store interface {
	manage.Store
	monitors.MaintenanceStore
	monitors.StatusPageStore
	APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error)
	APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error)
	APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error
	ChannelDelete(ctx context.Context, projectID, id string) error
	ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error)
	ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error)
	IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error)
	IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error)
	IncidentList(ctx context.Context, p *monitors.IncidentListParams) ([]*monitors.Incident, error)
	MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error)
	MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error)
	MonitorListPage(ctx context.Context, p *monitors.MonitorPageParams) (*monitors.MonitorPage, error)
	MonitorListMarker(ctx context.Context, projectID string) (string, error)
	MonitorRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Monitor, error)
	OutageList(ctx context.Context, p *monitors.OutageListParams) ([]*monitors.Outage, error)
	PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error)
	ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error)
	ProjectList(ctx context.Context) ([]*monitors.Project, error)
	ProjectListByUser(ctx context.Context, userID string) ([]*monitors.Project, error)
	ProjectRename(ctx context.Context, p *monitors.ProjectRenameParams) (*monitors.Project, error)
	ProjectRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Project, error)
	RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error)
	monitors.UptimeStore
	RunBriefList(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]monitors.RunBrief, error)
	SessionCreate(ctx context.Context, p *monitors.SessionCreateParams) (*monitors.Session, error)
	SessionDelete(ctx context.Context, tokenHash string) error
	SessionDeleteByUser(ctx context.Context, p *monitors.SessionDeleteByUserParams) (int64, error)
	SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error)
	SessionExtend(ctx context.Context, id string, expiresAt time.Time) error
	SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error)
	UserCount(ctx context.Context) (int, error)
	UserCreate(ctx context.Context, p *monitors.UserCreateParams) (*monitors.User, error)
	UserGet(ctx context.Context, id string) (*monitors.User, error)
	UserGetByEmail(ctx context.Context, email string) (*monitors.User, error)
	UserSetPassword(ctx context.Context, p *monitors.UserSetPasswordParams) error
}
