package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// The store's reads and single-statement writes, each one query.

// get runs q for one row.
func get[T any](ctx context.Context, s *Store, scan func(pgx.Row) (T, error), what, q string, args ...any) (T, error) {
	v, err := scan(s.pool.QueryRow(ctx, q, args...))
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// list runs q and scans every row.
func list[T any](ctx context.Context, s *Store, scan func(pgx.Row) (T, error), what, q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpret(err))
	}
	return out, nil
}

// exec runs q; with must, a statement that changes no row is
// monitors.ErrNotFound.
func exec(ctx context.Context, s *Store, must bool, what, q string, args ...any) (int64, error) {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, interpret(err))
	}
	if must && tag.RowsAffected() == 0 {
		return 0, fmt.Errorf("%s: %w", what, monitors.ErrNotFound)
	}
	return tag.RowsAffected(), nil
}

// ProjectCreate stores a new project. An ID or ping key already in use is
// monitors.ErrConflict.
func (s *Store) ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error) {
	pr := &monitors.Project{ID: p.ID, Name: p.Name, PingKey: p.PingKey, CreatedAt: plan.NowOr(p.Now)}
	_, err := exec(ctx, s, false, "create project", qProjectCreate, pr.ID, pr.Name, pr.PingKey, pr.CreatedAt)
	return nilIfErr(pr, err)
}

// ProjectGet returns the project with that ID.
func (s *Store) ProjectGet(ctx context.Context, id string) (*monitors.Project, error) {
	return get(ctx, s, scanProject, "get project "+id, qProjectGet, id)
}

// ProjectGetByPingKey returns the project with that project ping key.
func (s *Store) ProjectGetByPingKey(ctx context.Context, pingKey string) (*monitors.Project, error) {
	return get(ctx, s, scanProject, "get project by ping key", qProjectGetByPingKey, pingKey)
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
	return get(ctx, s, scanProject, "rename project "+p.ID, qProjectRename, p.ID, p.Name)
}

// ProjectMemberAdd makes a user a member of a project.
func (s *Store) ProjectMemberAdd(ctx context.Context, p *monitors.ProjectMemberAddParams) error {
	_, err := exec(ctx, s, false, "add member to project "+p.ProjectID, qProjectMemberAdd, p.ProjectID, p.UserID, plan.NowOr(p.Now))
	return err
}

// ProjectBadgeKey returns the project's badge key, making one on first use;
// a key another replica set first is kept.
func (s *Store) ProjectBadgeKey(ctx context.Context, projectID string) (string, error) {
	key, err := get(ctx, s, scanString, "get badge key of project "+projectID, qProjectBadgeKey, projectID)
	if err != nil || key != "" {
		return key, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return get(ctx, s, scanString, "set badge key of project "+projectID, qProjectBadgeKeySet, projectID,
		base64.RawURLEncoding.EncodeToString(b))
}

// APIKeyCreate stores a new API key. An unknown project is
// monitors.ErrNotFound; a hash already stored is monitors.ErrConflict.
func (s *Store) APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error) {
	k := &monitors.APIKey{ID: p.ID, ProjectID: p.ProjectID, Name: p.Name, Prefix: p.Prefix, Hash: p.Hash,
		ReadOnly: p.ReadOnly, CreatedAt: plan.NowOr(p.Now)}
	_, err := exec(ctx, s, false, "create api key", qAPIKeyCreate, k.ID, k.ProjectID, k.Name, k.Prefix, k.Hash, k.ReadOnly, k.CreatedAt)
	return nilIfErr(k, err)
}

// APIKeyGetByHash returns the unrevoked key with that hash.
func (s *Store) APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error) {
	return get(ctx, s, scanAPIKey, "get api key", qAPIKeyGetByHash, hash)
}

// APIKeyList returns the project's keys, revoked ones included.
func (s *Store) APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error) {
	return list(ctx, s, scanAPIKey, "list api keys", qAPIKeyList, projectID)
}

// APIKeyRevoke revokes a key; revoking it again keeps the first time.
func (s *Store) APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error {
	_, err := exec(ctx, s, true, "revoke api key "+id, qAPIKeyRevoke, projectID, id, at.UTC())
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
	return get(ctx, s, scanMonitor1, "get monitor "+id, qMonitorGet, projectID, id)
}

// MonitorGetBySlug returns the project's monitor with that slug.
func (s *Store) MonitorGetBySlug(ctx context.Context, projectID, slug string) (*monitors.Monitor, error) {
	return get(ctx, s, scanMonitor1, fmt.Sprintf("get monitor by slug %q", slug), qMonitorGetBySlug, projectID, slug)
}

// MonitorGetByPingKey returns the monitor with that ping key.
func (s *Store) MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error) {
	return get(ctx, s, scanMonitor1, "get monitor by ping key", qMonitorGetByPingKey, pingKey)
}

// MonitorList returns the project's monitors that pass p's filters, ordered
// by name then ID. A Limit of 0 or less returns them all.
func (s *Store) MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error) {
	args := []any{p.ProjectID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	q := "SELECT " + monitorCols + " FROM monitors WHERE project_id = $1"
	if p.Tag != "" {
		q += " AND tags @> ARRAY[" + arg(p.Tag) + "::text]"
	}
	if p.Source != "" {
		q += " AND source = " + arg(p.Source)
	}
	if len(p.Statuses) > 0 {
		q += " AND " + monitors.StatusSQL(p.Statuses, p.Now.UTC(), arg, func(col string, l []string) string {
			return col + " = ANY(" + arg(l) + "::text[])"
		})
	}
	q += " ORDER BY name, id LIMIT " + arg(limitArg(p.Limit)) + " OFFSET " + arg(max(p.Offset, 0))
	return list(ctx, s, scanMonitor1, "list monitors", q, args...)
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
		fields []string
	}
	rows, err := list(ctx, s, func(r pgx.Row) (v pf, err error) { return v, r.Scan(&v.id, &v.fields) },
		"get person fields", qMonitorPersonFields, projectID, nonNil(ids))
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
	rows, err := list(ctx, s, func(r pgx.Row) (c count, err error) { return c, r.Scan(&c.st, &c.n) },
		"count monitors", qMonitorCountByStatus, now.UTC())
	out := make(map[monitors.Status]int64)
	for _, c := range rows {
		out[monitors.Status(c.st)] += c.n
	}
	return out, err
}

// MonitorNextDeadline returns the earliest next deadline of any unpaused
// monitor, or nil when there is none.
func (s *Store) MonitorNextDeadline(ctx context.Context) (*time.Time, error) {
	return get(ctx, s, func(r pgx.Row) (t *time.Time, err error) { err = r.Scan(&t); return utcPtr(t), err },
		"read next deadline", qMonitorNextDeadline)
}

// checkMonitor returns monitors.ErrNotFound unless the project has the
// monitor.
func (s *Store) checkMonitor(ctx context.Context, what, projectID, id string) error {
	return s.check(ctx, what, qMonitorExists, projectID, id)
}

func (s *Store) check(ctx context.Context, what, q string, args ...any) error {
	ok, err := get(ctx, s, func(r pgx.Row) (ok bool, err error) { return ok, r.Scan(&ok) }, what, q, args...)
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
	runs, err := list(ctx, s, scanRun, "list recent runs", qRunListRecent, p.ProjectID, p.MonitorIDs, p.PerMonitor)
	for _, r := range runs {
		out[r.MonitorID] = append(out[r.MonitorID], r)
	}
	return out, err
}

// PruneCutoffs finds where the kept history of a chunk of monitors ends.
func (s *Store) PruneCutoffs(ctx context.Context, after string, keepPings, keepRuns int64, limit int) ([]plan.PruneCut, error) {
	return list(ctx, s, func(r pgx.Row) (c plan.PruneCut, err error) { return c, r.Scan(&c.MonitorID, &c.Ping, &c.Run) },
		"find cutoffs", qPingPruneCutoffs, after, keepPings, keepRuns, limit)
}

// PruneDelete deletes a chunk of a monitor's old pings or runs.
func (s *Store) PruneDelete(ctx context.Context, runs bool, monitorID string, cutoff int64, limit int) (int64, error) {
	q := qPingPrune
	if runs {
		q = qRunPrune
	}
	return exec(ctx, s, false, "prune", q, monitorID, cutoff, limit)
}

// IncidentGet returns an incident of the project.
func (s *Store) IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error) {
	return get(ctx, s, scanIncident, "get incident "+id, qIncidentGet, projectID, id)
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
		utcPtr(p.Since), limitArg(p.Limit), max(p.Offset, 0))
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
	return list(ctx, s, func(r pgx.Row) (c monitors.IncidentCount, err error) {
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
	now := plan.NowOr(p.Now)
	if _, err := exec(ctx, s, false, "create channel", qChannelCreate, p.ID, p.ProjectID, p.Kind, p.Name,
		configArg(p.Config), p.IsDefault, now, now); err != nil {
		return nil, err
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelGet returns a channel of the project.
func (s *Store) ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	return get(ctx, s, scanChannel, "get channel "+id, qChannelGet, projectID, id)
}

// ChannelList returns the project's channels by name.
func (s *Store) ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error) {
	return list(ctx, s, scanChannel, "list channels", qChannelList, p.ProjectID, limitArg(p.Limit), max(p.Offset, 0))
}

// DeliveryGet returns a delivery of the project, with the event it carries
// and the earlier pending delivery it waits for, if any.
func (s *Store) DeliveryGet(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	return get(ctx, s, scanDeliveryFull, fmt.Sprintf("get delivery %d", id), qDeliveryGet, projectID, id)
}

// DeliveryList returns the deliveries of the project's incidents with those
// IDs, each with its attempts.
func (s *Store) DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error) {
	if len(p.IncidentIDs) == 0 {
		return []*monitors.Delivery{}, nil
	}
	ds, err := list(ctx, s, scanDeliveryFull, "list deliveries", qDeliveryList, p.ProjectID, p.IncidentIDs)
	if err != nil {
		return nil, err
	}
	as, err := list(ctx, s, scanAttempt, "list delivery attempts", qAttemptList, p.ProjectID, p.IncidentIDs)
	plan.AttachAttempts(ds, as)
	return ds, err
}

// UserCount returns how many users there are.
func (s *Store) UserCount(ctx context.Context) (int, error) {
	return get(ctx, s, func(r pgx.Row) (n int, err error) { return n, r.Scan(&n) }, "count users", qUserCount)
}

// UserGet returns the user with that ID.
func (s *Store) UserGet(ctx context.Context, id string) (*monitors.User, error) {
	return get(ctx, s, scanUser, "get user "+id, qUserGet, id)
}

// UserGetByEmail returns the user with that email, compared in lower case.
func (s *Store) UserGetByEmail(ctx context.Context, email string) (*monitors.User, error) {
	return get(ctx, s, scanUser, "get user by email", qUserGetByEmail, monitors.NormalizeEmail(email))
}

// SessionCreate stores a new session. An unknown user is
// monitors.ErrNotFound.
func (s *Store) SessionCreate(ctx context.Context, p *monitors.SessionCreateParams) (*monitors.Session, error) {
	se := &monitors.Session{ID: p.ID, UserID: p.UserID, TokenHash: p.TokenHash, CSRFToken: p.CSRFToken,
		CreatedAt: plan.NowOr(p.Now), ExpiresAt: p.ExpiresAt.UTC().Truncate(time.Microsecond)}
	_, err := exec(ctx, s, false, "create session", qSessionInsert, se.ID, se.UserID, se.TokenHash, se.CSRFToken, se.CreatedAt, se.ExpiresAt)
	return nilIfErr(se, err)
}

// SessionGet returns the unexpired session with that token hash.
func (s *Store) SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error) {
	return get(ctx, s, scanSession, "get session", qSessionGet, p.TokenHash, p.Now.UTC())
}

// SessionExtend moves a session's expiry.
func (s *Store) SessionExtend(ctx context.Context, id string, expiresAt time.Time) error {
	_, err := exec(ctx, s, true, "extend session", qSessionExtend, id, expiresAt.UTC())
	return err
}

// SessionDelete ends the session with that token hash.
func (s *Store) SessionDelete(ctx context.Context, tokenHash string) error {
	_, err := exec(ctx, s, false, "delete session", qSessionDelete, tokenHash)
	return err
}

// SessionDeleteExpired deletes the sessions expired at now.
func (s *Store) SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	return exec(ctx, s, false, "delete expired sessions", qSessionDeleteExpired, now.UTC())
}

// ExplainEvaluateDue returns the plans of the two queries an evaluator pass
// runs on the monitors table, the claim of MonitorEvaluateDue at now and the
// look-up of MonitorNextDeadline, as EXPLAIN (ANALYZE, BUFFERS) reports
// them, with the planner settings the claim uses. They run in a
// transaction that is rolled back: no row stays locked.
// Operators and benchmarks use it to check that both read monitors_due_idx,
// so that their cost follows the due monitors, not all of them.
func (s *Store) ExplainEvaluateDue(ctx context.Context, now time.Time, limit int) (claim, next string, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", "", fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only; nothing to keep
	if _, err := tx.Exec(ctx, qClaimPlan); err != nil {
		return "", "", fmt.Errorf("explain: %w", err)
	}
	explain := func(q string, args ...any) (string, error) {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q, args...)
		if err != nil {
			return "", fmt.Errorf("explain: %w", err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return "", fmt.Errorf("explain: %w", err)
		}
		return strings.Join(lines, "\n"), nil
	}
	if claim, err = explain(qMonitorClaimDue, now.UTC(), limit); err != nil {
		return "", "", err
	}
	if next, err = explain(qMonitorNextDeadline); err != nil {
		return "", "", err
	}
	return claim, next, nil
}

// nilIfErr returns v, or nil with err.
func nilIfErr[T any](v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}
