package plan

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// The reads and single-statement writes of [monitors.Store], one query
// each, the same on both stores: each store gives the SQL (Scripts.Q) and
// converts the values.

func (s *Scripts) r() DB { return s.Driver.Reader() }
func (s *Scripts) w() DB { return s.Driver.Writer() }

// ProjectCreate stores a new project. An ID or ping key already in use is
// monitors.ErrConflict.
func (s *Scripts) ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error) {
	pr := &monitors.Project{ID: p.ID, Name: p.Name, PingKey: p.PingKey, CreatedAt: NowOr(p.Now)}
	_, err := s.w().Exec(ctx, s.Q.ProjectCreate, pr.ID, pr.Name, pr.PingKey, pr.CreatedAt)
	return wrap(pr, err)("create project")
}

func (s *Scripts) ProjectGet(ctx context.Context, id string) (*monitors.Project, error) {
	return wrap(One(ctx, s.r(), scanProject, s.Q.ProjectGet, id))("get project %s", id)
}

func (s *Scripts) ProjectGetByPingKey(ctx context.Context, pingKey string) (*monitors.Project, error) {
	return wrap(One(ctx, s.r(), scanProject, s.Q.ProjectGetByPingKey, pingKey))("get project by ping key")
}

func (s *Scripts) ProjectList(ctx context.Context) ([]*monitors.Project, error) {
	return wrap(All(ctx, s.r(), scanProject, s.Q.ProjectList))("list projects")
}

func (s *Scripts) ProjectListByUser(ctx context.Context, userID string) ([]*monitors.Project, error) {
	return wrap(All(ctx, s.r(), scanProject, s.Q.ProjectListByUser, userID))("list projects of user")
}

func (s *Scripts) ProjectRename(ctx context.Context, p *monitors.ProjectRenameParams) (*monitors.Project, error) {
	return wrap(One(ctx, s.w(), scanProject, s.Q.ProjectRename, p.ID, p.Name))("rename project %s", p.ID)
}

func (s *Scripts) ProjectMemberAdd(ctx context.Context, p *monitors.ProjectMemberAddParams) error {
	_, err := s.w().Exec(ctx, s.Q.ProjectMemberAdd, p.ProjectID, p.UserID, NowOr(p.Now))
	return wrapErr(err, "add member to project %s", p.ProjectID)
}

// ProjectBadgeKey returns the project's badge key, making one on first use;
// a key another replica set first is kept.
func (s *Scripts) ProjectBadgeKey(ctx context.Context, projectID string) (string, error) {
	key, err := One(ctx, s.r(), scalar[string], s.Q.ProjectBadgeKey, projectID)
	if err != nil || key != "" {
		return wrap(key, err)("get badge key of project %s", projectID)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return wrap(One(ctx, s.w(), scalar[string], s.Q.ProjectBadgeKeySet, projectID,
		base64.RawURLEncoding.EncodeToString(b)))("set badge key of project %s", projectID)
}

// APIKeyCreate stores a new API key. An unknown project is
// monitors.ErrNotFound; a hash already stored is monitors.ErrConflict.
func (s *Scripts) APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error) {
	k := &monitors.APIKey{ID: p.ID, ProjectID: p.ProjectID, Name: p.Name, Prefix: p.Prefix, Hash: p.Hash,
		ReadOnly: p.ReadOnly, CreatedAt: NowOr(p.Now)}
	_, err := s.w().Exec(ctx, s.Q.APIKeyCreate, k.ID, k.ProjectID, k.Name, k.Prefix, k.Hash, k.ReadOnly, k.CreatedAt)
	return wrap(k, err)("create api key")
}

func (s *Scripts) APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error) {
	return wrap(One(ctx, s.r(), scanAPIKey, s.Q.APIKeyGetByHash, hash))("get api key")
}

func (s *Scripts) APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error) {
	return wrap(All(ctx, s.r(), scanAPIKey, s.Q.APIKeyList, projectID))("list api keys")
}

// APIKeyRevoke revokes a key; revoking it again keeps the first time.
func (s *Scripts) APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error {
	return wrapErr(Exec1(ctx, s.w(), s.Q.APIKeyRevoke, projectID, id, at.UTC()), "revoke api key %s", id)
}

// MonitorInsert stores a new monitor, within the project's limit (see
// checkRoom). A slug or ping key already in use is monitors.ErrConflict;
// an unknown project is monitors.ErrNotFound.
func (s *Scripts) MonitorInsert(ctx context.Context, m *monitors.Monitor) error {
	if s.MaxMonitorsPerProject <= 0 && len(m.DependsOn) == 0 {
		return wrapErr(insertMonitor(ctx, s.w(), s.Q, m), "insert monitor")
	}
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		if err := s.checkRoom(ctx, tx, m.ProjectID, 1); err != nil {
			return err
		}
		if err := s.checkDependencies(ctx, tx, m.ProjectID, []*monitors.Monitor{m}); err != nil {
			return &fnError{err}
		}
		return insertMonitor(ctx, tx, s.Q, m)
	})
	return wrapUnlessFn(err, "insert monitor")
}

func insertMonitor(ctx context.Context, db DB, q *Queries, m *monitors.Monitor) error {
	args, err := MonitorArgs(m)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, q.MonitorInsert, args...)
	return err
}

func (s *Scripts) MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	return wrap(One(ctx, s.r(), ScanMonitorRow, s.Q.MonitorGet, projectID, id))("get monitor %s", id)
}

func (s *Scripts) MonitorGetBySlug(ctx context.Context, projectID, slug string) (*monitors.Monitor, error) {
	return wrap(One(ctx, s.r(), ScanMonitorRow, s.Q.MonitorGetBySlug, projectID, slug))("get monitor by slug %q", slug)
}

func (s *Scripts) MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error) {
	return wrap(One(ctx, s.r(), ScanMonitorRow, s.Q.MonitorGetByPingKey, pingKey))("get monitor by ping key")
}

// ListMonitors runs a store's MonitorList query.
func ListMonitors(ctx context.Context, db DB, q string, args ...any) ([]*monitors.Monitor, error) {
	return wrap(All(ctx, db, scanListedMonitor, q, args...))("list monitors")
}

func (s *Scripts) MonitorDelete(ctx context.Context, projectID, id string) error {
	return wrapErr(Exec1(ctx, s.w(), s.Q.MonitorDelete, projectID, id), "delete monitor %s", id)
}

func (s *Scripts) MonitorPersonFields(ctx context.Context, projectID string, ids []string) (map[string][]string, error) {
	type pf struct {
		id     string
		fields []string
	}
	rows, err := All(ctx, s.r(), func(r Row) (v pf, err error) { return v, r.Scan(&v.id, &v.fields) },
		s.Q.MonitorPersonFields, projectID, nonNil(ids))
	if err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	out := make(map[string][]string, len(rows))
	for _, r := range rows {
		out[r.id] = r.fields
	}
	return out, nil
}

// MonitorCountByStatus counts monitors by status at now, late derived as
// in MonitorList.
func (s *Scripts) MonitorCountByStatus(ctx context.Context, now time.Time) (map[monitors.Status]int64, error) {
	type count struct {
		st monitors.Status
		n  int64
	}
	rows, err := All(ctx, s.r(), func(r Row) (c count, err error) { return c, r.Scan(&c.st, &c.n) },
		s.Q.MonitorCountByStatus, now.UTC())
	if err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	out := make(map[monitors.Status]int64)
	for _, c := range rows {
		out[c.st] += c.n
	}
	return out, nil
}

// MonitorNextDeadline returns the earliest next deadline of any unpaused
// monitor, or nil when there is none.
func (s *Scripts) MonitorNextDeadline(ctx context.Context) (*time.Time, error) {
	return wrap(One(ctx, s.r(), scalar[*time.Time], s.Q.MonitorNextDeadline))("read next deadline")
}

// check returns monitors.ErrNotFound unless q finds a row.
func (s *Scripts) check(ctx context.Context, what, q string, args ...any) error {
	ok, err := One(ctx, s.r(), scalar[bool], q, args...)
	if err == nil && !ok {
		err = monitors.ErrNotFound
	}
	return wrapErr(err, "%s", what)
}

// PingCountByMonitor counts the pings kept of the project's monitors with
// those IDs, by ID; monitors without pings, or unknown, are left out.
func (s *Scripts) PingCountByMonitor(ctx context.Context, projectID string, ids []string) (map[string]int64, error) {
	type count struct {
		id string
		n  int64
	}
	rows, err := All(ctx, s.r(), func(r Row) (c count, err error) { return c, r.Scan(&c.id, &c.n) },
		s.Q.PingCountByMonitor, projectID, nonNil(ids))
	if err != nil {
		return nil, fmt.Errorf("count pings: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.id] = r.n
	}
	return out, nil
}

// PingList returns a monitor's pings, newest first, before p.Before when it
// is not 0. A monitor of another project is monitors.ErrNotFound.
func (s *Scripts) PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error) {
	if err := s.check(ctx, "list pings of monitor "+p.MonitorID, s.Q.MonitorExists, p.ProjectID, p.MonitorID); err != nil {
		return nil, err
	}
	return wrap(All(ctx, s.r(), scanPing, s.Q.PingList, p.MonitorID, p.Before, LimitArg(p.Limit)))("list pings")
}

// RunList returns a monitor's runs, newest first, before the run of seq
// p.Before when it is not 0.
func (s *Scripts) RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error) {
	if err := s.check(ctx, "list runs of monitor "+p.MonitorID, s.Q.MonitorExists, p.ProjectID, p.MonitorID); err != nil {
		return nil, err
	}
	return wrap(All(ctx, s.r(), scanRun, s.Q.RunList, p.MonitorID, p.Before, LimitArg(p.Limit)))("list runs")
}

// RunListRecent returns the newest runs of each monitor, by monitor ID.
func (s *Scripts) RunListRecent(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]*monitors.Run, error) {
	out := make(map[string][]*monitors.Run)
	if len(p.MonitorIDs) == 0 || p.PerMonitor <= 0 {
		return out, nil
	}
	runs, err := All(ctx, s.r(), scanRun, s.Q.RunListRecent, p.ProjectID, p.MonitorIDs, p.PerMonitor)
	for _, r := range runs {
		out[r.MonitorID] = append(out[r.MonitorID], r)
	}
	return wrap(out, err)("list recent runs")
}

// RunBriefList returns the outcome and duration of the newest runs of each
// monitor, newest first, by monitor ID.
func (s *Scripts) RunBriefList(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]monitors.RunBrief, error) {
	out := make(map[string][]monitors.RunBrief)
	if len(p.MonitorIDs) == 0 || p.PerMonitor <= 0 {
		return out, nil
	}
	type row struct{ id, runs string }
	rows, err := All(ctx, s.r(), func(r Row) (v row, err error) { return v, r.Scan(&v.id, &v.runs) },
		s.Q.RunBriefList, p.ProjectID, p.MonitorIDs, p.PerMonitor)
	if err != nil {
		return nil, fmt.Errorf("list recent runs: %w", err)
	}
	for _, r := range rows {
		briefs, err := parseRunBriefs(r.runs)
		if err != nil {
			return nil, fmt.Errorf("list recent runs of %s: %w", r.id, err)
		}
		out[r.id] = briefs
	}
	return out, nil
}

// parseRunBriefs reads "outcome:duration_ms,..." as RunBriefList's query
// writes it.
func parseRunBriefs(text string) ([]monitors.RunBrief, error) {
	out := make([]monitors.RunBrief, 0, strings.Count(text, ",")+1)
	for item := range strings.SplitSeq(text, ",") {
		outcome, dur, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("run %q: no duration field", item)
		}
		b := monitors.RunBrief{Outcome: monitors.RunOutcome(outcome)}
		if dur != "" {
			ms, err := strconv.ParseInt(dur, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("run %q: duration: %w", item, err)
			}
			b.DurationMS = &ms
		}
		out = append(out, b)
	}
	return out, nil
}

func (s *Scripts) IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error) {
	return wrap(One(ctx, s.r(), scanIncident, s.Q.IncidentGet, projectID, id))("get incident %s", id)
}

// IncidentList returns the project's incidents, newest first. With Since,
// only incidents open at some instant at or after it.
func (s *Scripts) IncidentList(ctx context.Context, p *monitors.IncidentListParams) ([]*monitors.Incident, error) {
	if p.MonitorID != "" {
		if err := s.check(ctx, "list incidents of monitor "+p.MonitorID, s.Q.MonitorExists, p.ProjectID, p.MonitorID); err != nil {
			return nil, err
		}
	}
	var since *time.Time
	if p.Since != nil {
		since = TimeOrNil(*p.Since)
	}
	return wrap(All(ctx, s.r(), scanIncident, s.Q.IncidentList, p.ProjectID, p.MonitorID, p.OpenOnly, since,
		LimitArg(p.Limit), max(p.Offset, 0)))("list incidents")
}

// IncidentEventList returns incident events of the project, oldest first:
// those of p.IncidentID, or all when it is empty.
func (s *Scripts) IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error) {
	if p.IncidentID != "" {
		if err := s.check(ctx, "list events of incident "+p.IncidentID, s.Q.IncidentExists, p.ProjectID, p.IncidentID); err != nil {
			return nil, err
		}
	}
	return wrap(All(ctx, s.r(), ScanEvent, s.Q.IncidentEventList, p.ProjectID, p.IncidentID, LimitArg(p.Limit)))("list incident events")
}

func (s *Scripts) IncidentCountByKind(ctx context.Context) ([]monitors.IncidentCount, error) {
	return wrap(All(ctx, s.r(), func(r Row) (c monitors.IncidentCount, err error) {
		return c, r.Scan(&c.Kind, &c.Opened, &c.Open)
	}, s.Q.IncidentCountByKind))("count incidents")
}

func (s *Scripts) OutageList(ctx context.Context, p *monitors.OutageListParams) ([]*monitors.Outage, error) {
	return wrap(All(ctx, s.r(), scanOutage, s.Q.OutageList, p.Before, LimitArg(p.Limit)))("list outages")
}

// ChannelCreate stores a new channel. A name already used in the project
// (or an ID already used) is monitors.ErrConflict; an unknown project is
// monitors.ErrNotFound.
func (s *Scripts) ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error) {
	now := NowOr(p.Now)
	config, err := s.configArg(p.ID, p.Config)
	if err != nil {
		return nil, err
	}
	group := 0
	if p.GroupSeconds != nil {
		group = *p.GroupSeconds
	}
	if _, err := s.w().Exec(ctx, s.Q.ChannelCreate, p.ID, p.ProjectID, p.Kind, p.Name, config,
		p.IsDefault, now, now, p.NotifyLate, group, string(p.Report)); err != nil {
		return nil, fmt.Errorf("create channel: %w", err)
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

func (s *Scripts) ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	return wrap(s.openChannel(One(ctx, s.r(), scanChannel, s.Q.ChannelGet, projectID, id)))("get channel %s", id)
}

func (s *Scripts) ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error) {
	return wrap(s.openChannels(All(ctx, s.r(), scanChannel, s.Q.ChannelList, p.ProjectID, LimitArg(p.Limit), max(p.Offset, 0))))("list channels")
}

// DeliveryGet returns a delivery of the project, with the event it carries
// and the earlier pending delivery it waits for, if any.
func (s *Scripts) DeliveryGet(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	return wrap(One(ctx, s.r(), scanDeliveryFull, s.Q.DeliveryGet, projectID, id))("get delivery %d", id)
}

// DeliveryGroup returns the pending members of one group of a channel
// (see monitors.Delivery.GroupAt), by ID.
func (s *Scripts) DeliveryGroup(ctx context.Context, projectID, channelID string, groupAt time.Time, limit int) ([]*monitors.Delivery, error) {
	ds, err := All(ctx, s.r(), scanDeliveryFull, s.Q.DeliveryGroup, projectID, channelID, groupAt.UTC(), LimitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list the group of channel %s: %w", channelID, err)
	}
	return ds, nil
}

// DeliveryList returns the deliveries of the project's incidents with those
// IDs, each with its attempts.
func (s *Scripts) DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error) {
	if len(p.IncidentIDs) == 0 {
		return []*monitors.Delivery{}, nil
	}
	ds, err := All(ctx, s.r(), scanDeliveryFull, s.Q.DeliveryList, p.ProjectID, p.IncidentIDs)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	as, err := All(ctx, s.r(), scanAttempt, s.Q.AttemptList, p.ProjectID, p.IncidentIDs)
	if err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	AttachAttempts(ds, as)
	return ds, nil
}

func (s *Scripts) UserCount(ctx context.Context) (int, error) {
	return wrap(One(ctx, s.r(), scalar[int], s.Q.UserCount))("count users")
}

func (s *Scripts) UserGet(ctx context.Context, id string) (*monitors.User, error) {
	return wrap(One(ctx, s.r(), scanUser, s.Q.UserGet, id))("get user %s", id)
}

// UserGetByEmail finds a user by email, compared in lower case.
func (s *Scripts) UserGetByEmail(ctx context.Context, email string) (*monitors.User, error) {
	return wrap(One(ctx, s.r(), scanUser, s.Q.UserGetByEmail, monitors.NormalizeEmail(email)))("get user by email")
}

func (s *Scripts) SessionCreate(ctx context.Context, p *monitors.SessionCreateParams) (*monitors.Session, error) {
	se := &monitors.Session{ID: p.ID, UserID: p.UserID, TokenHash: p.TokenHash, CSRFToken: p.CSRFToken,
		CreatedAt: NowOr(p.Now), ExpiresAt: p.ExpiresAt.UTC().Truncate(time.Microsecond)}
	_, err := s.w().Exec(ctx, s.Q.SessionInsert, se.ID, se.UserID, se.TokenHash, se.CSRFToken, se.CreatedAt, se.ExpiresAt)
	return wrap(se, err)("create session")
}

func (s *Scripts) SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error) {
	return wrap(One(ctx, s.r(), scanSession, s.Q.SessionGet, p.TokenHash, p.Now.UTC()))("get session")
}

func (s *Scripts) SessionExtend(ctx context.Context, id string, expiresAt time.Time) error {
	return wrapErr(Exec1(ctx, s.w(), s.Q.SessionExtend, id, expiresAt.UTC()), "extend session")
}

func (s *Scripts) SessionDelete(ctx context.Context, tokenHash string) error {
	_, err := s.w().Exec(ctx, s.Q.SessionDelete, tokenHash)
	return wrapErr(err, "delete session")
}

func (s *Scripts) SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	return wrap(s.w().Exec(ctx, s.Q.SessionDeleteExpired, now.UTC()))("delete expired sessions")
}

func wrapErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// PageSQL are a store's statements for one MonitorListPage call, each with
// its arguments:
//
//   - Counts: rows (status at now, count, the earliest expected time after
//     now of the up monitors, NULL for none), over all of the project's
//     monitors;
//   - Tags: rows (tags), the project's distinct lists of tags (a few: most
//     monitors share theirs), which ListPage makes the distinct tags.
//     Empty when Counts returns them too, in one scan (GROUPING SETS):
//     then Counts' rows are (status, count, earliest, tags), a row of the
//     counts with tags NULL and a row of a list of tags with status NULL;
//   - Page: the page, rows of the monitor columns followed by the row's
//     version (text) and the number of monitors that pass the filters
//     (count(*) OVER ()), or NULL for Total when no filter is set;
//   - Matched: one row, the number of monitors that pass the filters, run
//     only when the page is empty;
//   - Index: the page as Page finds it, rows of (ID, version, matched)
//     only, with PageArgs: run instead of Page when the caller knows some
//     monitors (Known), so that only the rows of the others are read
//     whole;
//   - Rows: the monitors of the project RowsArgs[0] whose IDs are in the
//     list RowsArgs[1] (added by ListPage), rows of the monitor columns
//     followed by the row's version.
//
// With Concurrent, Counts (and Tags) run at the same time as the page's
// statements, on another connection of db, which must be safe for
// concurrent use (a pool). Each scans all of the project's monitors, and
// neither needs the other's answer; they are separate statements either
// way, each with its own snapshot, so running them at once mixes no more
// instants than running them in turn.
type PageSQL struct {
	Counts, Tags, Page, Matched, Index, Rows    string
	CountsArgs, TagsArgs, PageArgs, MatchedArgs []any
	RowsArgs                                    []any
	Known                                       map[string]monitors.KnownMonitor
	Concurrent                                  bool
}

// ListPage runs a store's MonitorListPage statements.
func ListPage(ctx context.Context, db DB, q *PageSQL) (*monitors.MonitorPage, error) {
	var (
		out  *monitors.MonitorPage
		rows []listed
		err  error
	)
	if !q.Concurrent {
		if out, err = pageCounts(ctx, db, q); err != nil {
			return nil, err
		}
		if rows, err = pageRows(ctx, db, q); err != nil {
			return nil, err
		}
	} else {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			var err error
			out, err = pageCounts(ctx, db, q)
			done <- err
		}()
		rows, err = pageRows(ctx, db, q)
		if err != nil {
			cancel()
		}
		if cerr := <-done; err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	for _, l := range rows {
		out.Monitors = append(out.Monitors, l.m)
		out.Versions = append(out.Versions, l.version)
		out.Matched = out.Total
		if l.matched != nil {
			out.Matched = *l.matched
		}
	}
	if len(rows) == 0 {
		if out.Matched, err = One(ctx, db, func(r Row) (n int, err error) { return n, r.Scan(&n) }, q.Matched, q.MatchedArgs...); err != nil {
			return nil, fmt.Errorf("count matching monitors: %w", err)
		}
	}
	return out, nil
}

// pageCounts runs the Counts (and Tags) statements of q: a page with
// Total, Counts, Tags and LateAt.
func pageCounts(ctx context.Context, db DB, q *PageSQL) (*monitors.MonitorPage, error) {
	out := &monitors.MonitorPage{Counts: make(map[monitors.Status]int)}
	type count struct {
		st     monitors.Status
		n      int
		lateAt *time.Time
	}
	var lists [][]string
	counts, err := All(ctx, db, func(r Row) (c count, err error) {
		if q.Tags != "" {
			return c, r.Scan(&c.st, &c.n, &c.lateAt)
		}
		var (
			st   *string
			tags []string
		)
		if err := r.Scan(&st, &c.n, &c.lateAt, &tags); err != nil {
			return c, err
		}
		if st == nil {
			lists = append(lists, tags)
			c.n, c.lateAt = 0, nil
			return c, nil
		}
		c.st = monitors.Status(*st)
		return c, nil
	}, q.Counts, q.CountsArgs...)
	if err != nil {
		return nil, fmt.Errorf("count monitors by status: %w", err)
	}
	for _, c := range counts {
		if c.st == "" {
			continue // a list of tags
		}
		out.Counts[c.st] += c.n
		out.Total += c.n
		if c.lateAt != nil && (out.LateAt.IsZero() || c.lateAt.Before(out.LateAt)) {
			out.LateAt = *c.lateAt
		}
	}
	if q.Tags != "" {
		if lists, err = All(ctx, db, func(r Row) (l []string, err error) { return l, r.Scan(&l) }, q.Tags, q.TagsArgs...); err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
	}
	out.Tags = []string{}
	for _, l := range lists {
		out.Tags = append(out.Tags, l...)
	}
	// Distinct and sorted here, byte by byte, whatever the database's
	// collation.
	slices.Sort(out.Tags)
	out.Tags = slices.Compact(out.Tags)
	return out, nil
}

// listed is a monitor of a page with the version of its row and the
// number of monitors that pass the filters.
type listed struct {
	m       *monitors.Monitor
	version string
	// matched is nil for all of them (no filter).
	matched *int
}

// pageRows reads the page of q: whole (Page) when the caller knows no
// monitor, or else its IDs and versions (Index) and then the rows of the
// monitors whose version is not the one known (Rows). A row written
// between the two reads is read at its newer version: the page then
// mixes two instants, as its separate statements may anyway, and the
// caller's marker, read before, already differs from the store's.
func pageRows(ctx context.Context, db DB, q *PageSQL) ([]listed, error) {
	if len(q.Known) == 0 {
		rows, err := All(ctx, db, func(r Row) (l listed, err error) {
			l.m, err = scanMonitorWith(r, decodeListed, &l.version, &l.matched)
			return l, err
		}, q.Page, q.PageArgs...)
		if err != nil {
			return nil, fmt.Errorf("list monitors: %w", err)
		}
		return rows, nil
	}
	type entry struct {
		id string
		listed
	}
	index, err := All(ctx, db, func(r Row) (e entry, err error) { return e, r.Scan(&e.id, &e.version, &e.matched) },
		q.Index, q.PageArgs...)
	if err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	var missing []string
	out := make([]listed, len(index))
	for i, e := range index {
		out[i] = e.listed
		if k, ok := q.Known[e.id]; ok && k.Version == e.version && k.Monitor != nil && k.Monitor.ID == e.id {
			out[i].m = k.Monitor
			continue
		}
		missing = append(missing, e.id)
	}
	if len(missing) == 0 {
		return out, nil
	}
	read, err := All(ctx, db, func(r Row) (l listed, err error) {
		l.m, err = scanMonitorWith(r, decodeListed, &l.version)
		return l, err
	}, q.Rows, append(slices.Clone(q.RowsArgs), missing)...)
	if err != nil {
		return nil, fmt.Errorf("read listed monitors: %w", err)
	}
	byID := make(map[string]listed, len(read))
	for _, l := range read {
		byID[l.m.ID] = l
	}
	kept := out[:0]
	for i, l := range out {
		if l.m == nil {
			r, ok := byID[index[i].id]
			if !ok {
				// Deleted since the index was read: left out, as a
				// page read a moment later would.
				continue
			}
			l.m, l.version = r.m, r.version
		}
		kept = append(kept, l)
	}
	return kept, nil
}

// MonitorListMarker runs a store's marker query, q, on project projectID.
func MonitorListMarker(ctx context.Context, db DB, q, projectID string) (string, error) {
	return wrap(One(ctx, db, func(r Row) (s string, err error) { return s, r.Scan(&s) }, q, projectID))("monitor list marker")
}
