package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// The store's reads and single-statement writes, each one query: reads on
// the pool of readers, writes on the one writer.

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryAll runs q and scans every row with scan.
func queryAll[T any](ctx context.Context, db querier, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, interpret(err)
	}
	return collect(rows, scan)
}

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, interpret(err)
		}
		out = append(out, v)
	}
	return out, interpret(rows.Err())
}

// get runs q on db for one row.
func get[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), what, q string, args ...any) (T, error) {
	v, err := scan(db.QueryRowContext(ctx, q, args...))
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, interpret(err))
	}
	return v, nil
}

// list runs q on the readers and scans every row.
func list[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), what, q string, args ...any) ([]T, error) {
	out, err := queryAll(ctx, s.r, q, args, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// exec runs q on the writer; with must, a statement that changes no row is
// monitors.ErrNotFound.
func exec(ctx context.Context, s *Store, must bool, what, q string, args ...any) (int64, error) {
	n, err := rowsAffected(s.w.ExecContext(ctx, q, args...))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, interpret(err))
	}
	if must && n == 0 {
		return 0, fmt.Errorf("%s: %w", what, monitors.ErrNotFound)
	}
	return n, nil
}

// ProjectCreate stores a new project. An ID or ping key already in use is
// monitors.ErrConflict.
func (s *Store) ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error) {
	pr := &monitors.Project{ID: p.ID, Name: p.Name, PingKey: p.PingKey, CreatedAt: plan.NowOr(p.Now)}
	_, err := exec(ctx, s, false, "create project", qProjectCreate, pr.ID, pr.Name, pr.PingKey, micros(pr.CreatedAt))
	return nilIfErr(pr, err)
}

// ProjectGet returns the project with that ID.
func (s *Store) ProjectGet(ctx context.Context, id string) (*monitors.Project, error) {
	return get(ctx, s.r, scanProject, "get project "+id, qProjectGet, id)
}

// ProjectGetByPingKey returns the project with that project ping key.
func (s *Store) ProjectGetByPingKey(ctx context.Context, pingKey string) (*monitors.Project, error) {
	return get(ctx, s.r, scanProject, "get project by ping key", qProjectGetByPingKey, pingKey)
}

// ProjectList returns every project, oldest first.
func (s *Store) ProjectList(ctx context.Context) ([]*monitors.Project, error) {
	return list(ctx, s, scanProject, "list projects", qProjectList)
}

// ProjectListByUser returns the projects the user is a member of.
func (s *Store) ProjectListByUser(ctx context.Context, userID string) ([]*monitors.Project, error) {
	return list(ctx, s, scanProject, "list projects of user", qProjectListByUser, userID)
}

// ProjectRename changes a project's name.
func (s *Store) ProjectRename(ctx context.Context, p *monitors.ProjectRenameParams) (*monitors.Project, error) {
	return get(ctx, s.w, scanProject, "rename project "+p.ID, qProjectRename, p.ID, p.Name)
}

// ProjectMemberAdd makes a user a member of a project.
func (s *Store) ProjectMemberAdd(ctx context.Context, p *monitors.ProjectMemberAddParams) error {
	_, err := exec(ctx, s, false, "add member to project "+p.ProjectID, qProjectMemberAdd, p.ProjectID, p.UserID, micros(plan.NowOr(p.Now)))
	return err
}

// ProjectBadgeKey returns the project's badge key, making one on first use;
// a key another process set first is kept.
func (s *Store) ProjectBadgeKey(ctx context.Context, projectID string) (string, error) {
	key, err := get(ctx, s.r, scanString, "get badge key of project "+projectID, qProjectBadgeKey, projectID)
	if err != nil || key != "" {
		return key, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return get(ctx, s.w, scanString, "set badge key of project "+projectID, qProjectBadgeKeySet, projectID,
		base64.RawURLEncoding.EncodeToString(b))
}

// APIKeyCreate stores a new API key. An unknown project is
// monitors.ErrNotFound; a hash already stored is monitors.ErrConflict.
func (s *Store) APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error) {
	k := &monitors.APIKey{ID: p.ID, ProjectID: p.ProjectID, Name: p.Name, Prefix: p.Prefix, Hash: p.Hash,
		ReadOnly: p.ReadOnly, CreatedAt: plan.NowOr(p.Now)}
	_, err := exec(ctx, s, false, "create api key", qAPIKeyCreate, k.ID, k.ProjectID, k.Name, k.Prefix, k.Hash, k.ReadOnly, micros(k.CreatedAt))
	return nilIfErr(k, err)
}

// APIKeyGetByHash returns the unrevoked key with that hash.
func (s *Store) APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error) {
	return get(ctx, s.r, scanAPIKey, "get api key", qAPIKeyGetByHash, hash)
}

// APIKeyList returns the project's keys, revoked ones included.
func (s *Store) APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error) {
	return list(ctx, s, scanAPIKey, "list api keys", qAPIKeyList, projectID)
}

// APIKeyRevoke revokes a key; revoking it again keeps the first time.
func (s *Store) APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error {
	_, err := exec(ctx, s, true, "revoke api key "+id, qAPIKeyRevoke, projectID, id, micros(at))
	return err
}

// MonitorInsert stores a new monitor. A slug or ping key already in use is
// monitors.ErrConflict; an unknown project is monitors.ErrNotFound.
func (s *Store) MonitorInsert(ctx context.Context, m *monitors.Monitor) error {
	args, err := monitorArgs(m)
	if err != nil {
		return fmt.Errorf("insert monitor: %w", err)
	}
	_, err = exec(ctx, s, false, "insert monitor", qMonitorInsert, args...)
	return err
}

// MonitorGet returns a monitor of the project.
func (s *Store) MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	return get(ctx, s.r, scanMonitor1, "get monitor "+id, qMonitorGet, projectID, id)
}

// MonitorGetBySlug returns the project's monitor with that slug.
func (s *Store) MonitorGetBySlug(ctx context.Context, projectID, slug string) (*monitors.Monitor, error) {
	return get(ctx, s.r, scanMonitor1, fmt.Sprintf("get monitor by slug %q", slug), qMonitorGetBySlug, projectID, slug)
}

// MonitorGetByPingKey returns the monitor with that ping key.
func (s *Store) MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error) {
	return get(ctx, s.r, scanMonitor1, "get monitor by ping key", qMonitorGetByPingKey, pingKey)
}

// MonitorList returns the project's monitors that pass p's filters, ordered
// by name then ID. A Limit of 0 or less returns them all. Tag filters
// match exactly, through json_each.
func (s *Store) MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error) {
	args := []any{p.ProjectID}
	arg := func(v any) string {
		args = append(args, v)
		return "?"
	}
	var q strings.Builder
	q.WriteString("SELECT " + monitorCols + " FROM monitors WHERE project_id = ?")
	if p.Tag != "" {
		q.WriteString(" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = " + arg(p.Tag) + ")")
	}
	if p.Source != "" {
		q.WriteString(" AND source = " + arg(p.Source))
	}
	if len(p.Statuses) > 0 {
		q.WriteString(" AND " + monitors.StatusSQL(p.Statuses, micros(p.Now), arg, func(col string, l []string) string {
			return col + " IN (SELECT value FROM json_each(" + arg(jsonList(l)) + "))"
		}))
	}
	q.WriteString(" ORDER BY name, id LIMIT " + arg(limitArg(p.Limit)) + " OFFSET " + arg(max(p.Offset, 0)))
	return list(ctx, s, scanMonitor1, "list monitors", q.String(), args...)
}

// MonitorDelete deletes a monitor of the project with its history.
func (s *Store) MonitorDelete(ctx context.Context, projectID, id string) error {
	_, err := exec(ctx, s, true, "delete monitor "+id, qMonitorDelete, projectID, id)
	return err
}

// MonitorPersonFields returns the person fields of monitors of the project.
func (s *Store) MonitorPersonFields(ctx context.Context, projectID string, ids []string) (map[string][]string, error) {
	type pf struct {
		id     string
		fields strList
	}
	rows, err := list(ctx, s, func(r scanner) (v pf, err error) { return v, r.Scan(&v.id, &v.fields) },
		"get person fields", qMonitorPersonFields, projectID, jsonList(ids))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(rows))
	for _, r := range rows {
		out[r.id] = r.fields
	}
	return out, nil
}

// MonitorCountByStatus counts monitors by status at now.
func (s *Store) MonitorCountByStatus(ctx context.Context, now time.Time) (map[monitors.Status]int64, error) {
	type count struct {
		st string
		n  int64
	}
	rows, err := list(ctx, s, func(r scanner) (c count, err error) { return c, r.Scan(&c.st, &c.n) },
		"count monitors", qMonitorCountByStatus, micros(now))
	out := make(map[monitors.Status]int64)
	for _, c := range rows {
		out[monitors.Status(c.st)] += c.n
	}
	return out, err
}

// MonitorNextDeadline returns the earliest next deadline of any unpaused
// monitor, or nil when there is none.
func (s *Store) MonitorNextDeadline(ctx context.Context) (*time.Time, error) {
	return get(ctx, s.r, func(r scanner) (*time.Time, error) {
		var us sql.NullInt64
		err := r.Scan(&us)
		return fromNullMicros(us), err
	}, "read next deadline", qMonitorNextDeadline)
}

// checkMonitor returns monitors.ErrNotFound unless the project has the
// monitor.
func (s *Store) checkMonitor(ctx context.Context, what, projectID, id string) error {
	return s.check(ctx, what, qMonitorExists, projectID, id)
}

func (s *Store) check(ctx context.Context, what, q string, args ...any) error {
	ok, err := get(ctx, s.r, func(r scanner) (ok bool, err error) { return ok, r.Scan(&ok) }, what, q, args...)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", what, monitors.ErrNotFound)
	}
	return err
}

// PingList returns a monitor's pings, newest first, before p.Before when it
// is not 0. A monitor of another project is monitors.ErrNotFound.
func (s *Store) PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error) {
	if err := s.checkMonitor(ctx, "list pings of monitor "+p.MonitorID, p.ProjectID, p.MonitorID); err != nil {
		return nil, err
	}
	return list(ctx, s, scanPing, "list pings", qPingList, p.MonitorID, p.Before, limitArg(p.Limit))
}

// RunList returns a monitor's runs, newest first, before the run of seq
// p.Before when it is not 0.
func (s *Store) RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error) {
	if err := s.checkMonitor(ctx, "list runs of monitor "+p.MonitorID, p.ProjectID, p.MonitorID); err != nil {
		return nil, err
	}
	return list(ctx, s, scanRun, "list runs", qRunList, p.MonitorID, p.Before, limitArg(p.Limit))
}

// RunListRecent returns the newest runs of each monitor, by monitor ID.
func (s *Store) RunListRecent(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]*monitors.Run, error) {
	out := make(map[string][]*monitors.Run)
	if len(p.MonitorIDs) == 0 || p.PerMonitor <= 0 {
		return out, nil
	}
	runs, err := list(ctx, s, scanRun, "list recent runs", qRunListRecent, p.ProjectID, jsonList(p.MonitorIDs), p.PerMonitor)
	for _, r := range runs {
		out[r.MonitorID] = append(out[r.MonitorID], r)
	}
	return out, err
}

// PruneCutoffs finds where the kept history of a chunk of monitors ends.
func (s *Store) PruneCutoffs(ctx context.Context, after string, keepPings, keepRuns int64, limit int) ([]plan.PruneCut, error) {
	return list(ctx, s, func(r scanner) (c plan.PruneCut, err error) {
		var ping, run sql.NullInt64
		err = r.Scan(&c.MonitorID, &ping, &run)
		if ping.Valid {
			c.Ping = &ping.Int64
		}
		if run.Valid {
			c.Run = &run.Int64
		}
		return c, err
	}, "find cutoffs", qPingPruneCutoffs, after, keepPings, keepRuns, limit)
}

// PruneDelete deletes a chunk of a monitor's old pings or runs, in its own
// short write transaction, so that pings waiting for SQLite's one write
// lock never wait long.
func (s *Store) PruneDelete(ctx context.Context, runs bool, monitorID string, cutoff int64, limit int) (int64, error) {
	q := qPingPrune
	if runs {
		q = qRunPrune
	}
	return exec(ctx, s, false, "prune", q, monitorID, cutoff, limit)
}

// IncidentGet returns an incident of the project.
func (s *Store) IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error) {
	return get(ctx, s.r, scanIncident, "get incident "+id, qIncidentGet, projectID, id)
}

// IncidentList returns the project's incidents, newest first. With Since,
// only incidents open at some instant at or after it.
func (s *Store) IncidentList(ctx context.Context, p *monitors.IncidentListParams) ([]*monitors.Incident, error) {
	if p.MonitorID != "" {
		if err := s.checkMonitor(ctx, "list incidents of monitor "+p.MonitorID, p.ProjectID, p.MonitorID); err != nil {
			return nil, err
		}
	}
	return list(ctx, s, scanIncident, "list incidents", qIncidentList, p.ProjectID, p.MonitorID, p.OpenOnly,
		microsPtr(p.Since), limitArg(p.Limit), max(p.Offset, 0))
}

// IncidentEventList returns incident events of the project, oldest first:
// those of p.IncidentID, or all when it is empty.
func (s *Store) IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error) {
	if p.IncidentID != "" {
		if err := s.check(ctx, "list events of incident "+p.IncidentID, qIncidentExists, p.ProjectID, p.IncidentID); err != nil {
			return nil, err
		}
	}
	return list(ctx, s, scanEvent, "list incident events", qIncidentEventList, p.ProjectID, p.IncidentID, limitArg(p.Limit))
}

// IncidentCountByKind counts incidents by kind.
func (s *Store) IncidentCountByKind(ctx context.Context) ([]monitors.IncidentCount, error) {
	return list(ctx, s, func(r scanner) (c monitors.IncidentCount, err error) {
		return c, r.Scan(&c.Kind, &c.Opened, &c.Open)
	}, "count incidents", qIncidentCountByKind)
}

// OutageList lists outages, newest first.
func (s *Store) OutageList(ctx context.Context, p *monitors.OutageListParams) ([]*monitors.Outage, error) {
	return list(ctx, s, scanOutage, "list outages", qOutageList, p.Before, limitArg(p.Limit))
}

// ChannelCreate stores a new channel. A name already used in the project
// (or an ID already used) is monitors.ErrConflict; an unknown project is
// monitors.ErrNotFound.
func (s *Store) ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error) {
	now := micros(plan.NowOr(p.Now))
	if _, err := exec(ctx, s, false, "create channel", qChannelCreate, p.ID, p.ProjectID, p.Kind, p.Name,
		configArg(p.Config), p.IsDefault, now, now); err != nil {
		return nil, err
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelGet returns a channel of the project.
func (s *Store) ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	return get(ctx, s.r, scanChannel, "get channel "+id, qChannelGet, projectID, id)
}

// ChannelList returns the project's channels by name.
func (s *Store) ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error) {
	return list(ctx, s, scanChannel, "list channels", qChannelList, p.ProjectID, limitArg(p.Limit), max(p.Offset, 0))
}

// DeliveryGet returns a delivery of the project, with the event it carries
// and the earlier pending delivery it waits for, if any.
func (s *Store) DeliveryGet(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	return get(ctx, s.r, scanDeliveryFull, fmt.Sprintf("get delivery %d", id), qDeliveryGet, projectID, id)
}

// DeliveryList returns the deliveries of the project's incidents with those
// IDs, each with its attempts.
func (s *Store) DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error) {
	if len(p.IncidentIDs) == 0 {
		return []*monitors.Delivery{}, nil
	}
	ids := jsonList(p.IncidentIDs)
	ds, err := list(ctx, s, scanDeliveryFull, "list deliveries", qDeliveryList, p.ProjectID, ids)
	if err != nil {
		return nil, err
	}
	as, err := list(ctx, s, scanAttempt, "list delivery attempts", qAttemptList, p.ProjectID, ids)
	plan.AttachAttempts(ds, as)
	return ds, err
}

// UserCount returns how many users there are.
func (s *Store) UserCount(ctx context.Context) (int, error) {
	return get(ctx, s.r, func(r scanner) (n int, err error) { return n, r.Scan(&n) }, "count users", qUserCount)
}

// UserGet returns the user with that ID.
func (s *Store) UserGet(ctx context.Context, id string) (*monitors.User, error) {
	return get(ctx, s.r, scanUser, "get user "+id, qUserGet, id)
}

// UserGetByEmail returns the user with that email, compared in lower case.
func (s *Store) UserGetByEmail(ctx context.Context, email string) (*monitors.User, error) {
	return get(ctx, s.r, scanUser, "get user by email", qUserGetByEmail, monitors.NormalizeEmail(email))
}

// SessionCreate stores a new session. An unknown user is
// monitors.ErrNotFound.
func (s *Store) SessionCreate(ctx context.Context, p *monitors.SessionCreateParams) (*monitors.Session, error) {
	se := &monitors.Session{ID: p.ID, UserID: p.UserID, TokenHash: p.TokenHash, CSRFToken: p.CSRFToken,
		CreatedAt: plan.NowOr(p.Now), ExpiresAt: fromMicros(micros(p.ExpiresAt))}
	_, err := exec(ctx, s, false, "create session", qSessionInsert, se.ID, se.UserID, se.TokenHash, se.CSRFToken,
		micros(se.CreatedAt), micros(se.ExpiresAt))
	return nilIfErr(se, err)
}

// SessionGet returns the unexpired session with that token hash.
func (s *Store) SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error) {
	return get(ctx, s.r, scanSession, "get session", qSessionGet, p.TokenHash, micros(p.Now))
}

// SessionExtend moves a session's expiry.
func (s *Store) SessionExtend(ctx context.Context, id string, expiresAt time.Time) error {
	_, err := exec(ctx, s, true, "extend session", qSessionExtend, id, micros(expiresAt))
	return err
}

// SessionDelete ends the session with that token hash.
func (s *Store) SessionDelete(ctx context.Context, tokenHash string) error {
	_, err := exec(ctx, s, false, "delete session", qSessionDelete, tokenHash)
	return err
}

// SessionDeleteExpired deletes the sessions expired at now.
func (s *Store) SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	return exec(ctx, s, false, "delete expired sessions", qSessionDeleteExpired, micros(now))
}

// nilIfErr returns v, or nil with err.
func nilIfErr[T any](v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// optional turns "no row" into nil.
func optional[T any](v *T, err error) (*T, error) {
	if errors.Is(interpret(err), monitors.ErrNotFound) {
		return nil, nil
	}
	return v, err
}
