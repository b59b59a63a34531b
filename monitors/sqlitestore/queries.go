package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The store's SQL. pgstore has a query of the same name for each, so the two
// can be read side by side. SQLite differs in three ways that matter here:
// it has one writer, so there is no FOR UPDATE or SKIP LOCKED (a write
// transaction, begun IMMEDIATE, holds the only write lock); it has no
// data-modifying CTEs, so an incident and its event are two statements; and
// arrays are JSON text, read with json_each.

const (
	qProjectCreate       = `INSERT INTO projects (id, name, ping_key, created_at) VALUES (?, ?, ?, ?)`
	qProjectGet          = `SELECT id, name, ping_key, created_at FROM projects WHERE id = ?`
	qProjectGetByPingKey = `SELECT id, name, ping_key, created_at FROM projects WHERE ping_key = ?`
	qProjectList         = `SELECT id, name, ping_key, created_at FROM projects ORDER BY created_at, id`
	// qProjectIDsByPingKey resolves the project ping keys of a batch, given
	// as a JSON array.
	qProjectIDsByPingKey = `SELECT id, ping_key FROM projects WHERE ping_key IN (SELECT value FROM json_each(?))`

	apiKeyCols       = `id, project_id, name, prefix, hash, read_only, created_at, last_used_at, revoked_at`
	qAPIKeyCreate    = `INSERT INTO api_keys (id, project_id, name, prefix, hash, read_only, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qAPIKeyGetByHash = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE hash = ? AND revoked_at IS NULL`
	qAPIKeyList      = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE project_id = ? ORDER BY created_at, id`
	// qAPIKeyRevoke keeps the first revocation time when a key is revoked
	// twice.
	qAPIKeyRevoke = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?3) WHERE project_id = ?1 AND id = ?2`

	monitorCols = `id, project_id, name, slug, tags, schedule_kind, schedule_expr, schedule_tz, every_seconds,
		grace_seconds, max_runtime_seconds, deadline_seconds, alert_on_failure, failure_threshold,
		recovery_threshold, overlap, channels, paused, source, discovered, retry_policy, ping_key,
		created_at, updated_at, state, next_deadline, schedule_dialect`

	qMonitorInsert = `INSERT INTO monitors (id, project_id, name, slug, tags, schedule_kind, schedule_expr,
		schedule_tz, every_seconds, grace_seconds, max_runtime_seconds, deadline_seconds, alert_on_failure,
		failure_threshold, recovery_threshold, overlap, channels, paused, source, discovered, retry_policy,
		ping_key, created_at, updated_at, status, state, last_ping_at, next_expected_at, next_deadline,
		schedule_dialect)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
		?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)`
	// qMonitorUpdate writes a monitor's whole row but its ID and project
	// (MonitorModify). It takes qMonitorInsert's arguments.
	qMonitorUpdate = `UPDATE monitors SET name = ?3, slug = ?4, tags = ?5, schedule_kind = ?6,
		schedule_expr = ?7, schedule_tz = ?8, every_seconds = ?9, grace_seconds = ?10,
		max_runtime_seconds = ?11, deadline_seconds = ?12, alert_on_failure = ?13, failure_threshold = ?14,
		recovery_threshold = ?15, overlap = ?16, channels = ?17, paused = ?18, source = ?19,
		discovered = ?20, retry_policy = ?21, ping_key = ?22, created_at = ?23, updated_at = ?24, status = ?25, state = ?26,
		last_ping_at = ?27, next_expected_at = ?28, next_deadline = ?29, schedule_dialect = ?30
		WHERE id = ?1 AND project_id = ?2`
	// qMonitorUpdateState writes the evaluated state of many monitors in one
	// statement (PingRecordBatch, MonitorEvaluateDue), one row of
	// qMonitorUpdateStateRow per monitor.
	qMonitorUpdateState = `UPDATE monitors SET status = v.column2, state = v.column3, last_ping_at = v.column4,
		next_expected_at = v.column5, next_deadline = v.column6
		FROM (VALUES %s) AS v WHERE monitors.id = v.column1`
	qMonitorUpdateStateRow = `(?, ?, ?, ?, ?, ?)`
	qMonitorGet            = `SELECT ` + monitorCols + ` FROM monitors WHERE project_id = ? AND id = ?`
	qMonitorGetBySlug      = `SELECT ` + monitorCols + ` FROM monitors WHERE project_id = ? AND slug = ?`
	qMonitorGetByPingKey   = `SELECT ` + monitorCols + ` FROM monitors WHERE ping_key = ?`
	qMonitorExists         = `SELECT EXISTS (SELECT 1 FROM monitors WHERE project_id = ? AND id = ?)`
	qMonitorDelete         = `DELETE FROM monitors WHERE project_id = ? AND id = ?`
	// qMonitorLockBatch loads every monitor a batch of pings names, by ping
	// key (a JSON array) or by project ping key and slug (a JSON array of
	// pairs), in one query. No FOR UPDATE: the write transaction it runs in
	// already holds SQLite's only write lock.
	qMonitorLockBatch = `SELECT ` + monitorCols + ` FROM monitors WHERE id IN (
			SELECT id FROM monitors WHERE ping_key IN (SELECT value FROM json_each(?1))
			UNION
			SELECT m.id FROM json_each(?2) AS k
				JOIN projects p ON p.ping_key = k.value ->> 0
				JOIN monitors m ON m.project_id = p.id AND m.slug = k.value ->> 1)
		ORDER BY id`
	// qMonitorClaimDue claims due monitors. No SKIP LOCKED: SQLite has one
	// writer, and this runs in a write transaction, so no one else can
	// claim or change these rows until it commits.
	qMonitorClaimDue = `SELECT ` + monitorCols + ` FROM monitors
		WHERE NOT paused AND next_deadline <= ? ORDER BY next_deadline LIMIT ?`
	// qMonitorPostpone moves the deadline of a monitor that cannot be
	// evaluated.
	qMonitorPostpone     = `UPDATE monitors SET next_deadline = ?2 WHERE id = ?1`
	qMonitorNextDeadline = `SELECT min(next_deadline) FROM monitors WHERE NOT paused AND next_deadline IS NOT NULL`

	pingCols = `id, monitor_id, kind, at, rid, attempt, retry_at, exit_code, duration_ms, body, body_truncated,
		remote_addr, user_agent`
	// qPingInsert inserts many pings in one statement, one row of
	// qPingInsertRow each. IDs grow in row order (AUTOINCREMENT gives each
	// new row an ID above any before it), so the sorted IDs returned are
	// the rows' IDs in order.
	qPingInsert = `INSERT INTO pings (monitor_id, kind, at, rid, attempt, retry_at, exit_code, duration_ms,
		body, body_truncated, remote_addr, user_agent) VALUES %s RETURNING id`
	qPingInsertRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qPingList      = `SELECT ` + pingCols + ` FROM pings WHERE monitor_id = ?1 AND (?2 = 0 OR id < ?2)
		ORDER BY id DESC LIMIT ?3`
	// qPingPruneCutoffs finds, for a chunk of monitors in ID order, the
	// newest ping and run that are no longer kept.
	qPingPruneCutoffs = `SELECT m.id,
			(SELECT p.id FROM pings p WHERE p.monitor_id = m.id ORDER BY p.id DESC LIMIT 1 OFFSET ?2),
			(SELECT r.seq FROM runs r WHERE r.monitor_id = m.id ORDER BY r.seq DESC LIMIT 1 OFFSET ?3)
		FROM monitors m WHERE m.id > ?1 ORDER BY m.id LIMIT ?4`
	qPingPrune = `DELETE FROM pings WHERE id IN (
		SELECT id FROM pings WHERE monitor_id = ?1 AND id <= ?2 ORDER BY id LIMIT ?3)`
	qRunPrune = `DELETE FROM runs WHERE monitor_id = ?1 AND seq IN (
		SELECT seq FROM runs WHERE monitor_id = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)`

	runCols = `monitor_id, seq, rid, started_at, finished_at, outcome, duration_ms, attempt, exit_code,
		will_retry, stuck`
	// qRunUpsert writes many runs keyed by (monitor, seq), one row of
	// qRunUpsertRow each; each change carries the whole run, so the latest
	// wins.
	qRunUpsert = `INSERT INTO runs (` + runCols + `) VALUES %s
		ON CONFLICT (monitor_id, seq) DO UPDATE SET rid = excluded.rid, started_at = excluded.started_at,
			finished_at = excluded.finished_at, outcome = excluded.outcome, duration_ms = excluded.duration_ms,
			attempt = excluded.attempt, exit_code = excluded.exit_code, will_retry = excluded.will_retry,
			stuck = excluded.stuck`
	qRunUpsertRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qRunList      = `SELECT ` + runCols + ` FROM runs WHERE monitor_id = ?1 AND (?2 = 0 OR seq < ?2)
		ORDER BY seq DESC LIMIT ?3`

	incidentCols = `id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary,
		run_seq, ping_id`
	// qIncidentOpen inserts an incident; the partial unique index allows one
	// open incident per monitor and kind, and a second is a no-op, never an
	// error that would fail a batch. When it inserted, qEventInsert records
	// the opened event.
	qIncidentOpen = `INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq, ping_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING`
	// qIncidentUpdate records new facts about the open incident of a kind;
	// the incident keeps its opening summary.
	qIncidentUpdate = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.updated', ?3, ?4 FROM incidents
		WHERE monitor_id = ?1 AND kind = ?2 AND resolved_at IS NULL` + eventReturning
	// qIncidentResolve resolves the open incident of a kind; qEventInsert
	// then records the resolved event.
	qIncidentResolve = `UPDATE incidents SET resolved_at = ?3, resolve_summary = ?4
		WHERE monitor_id = ?1 AND kind = ?2 AND resolved_at IS NULL RETURNING id, project_id`
	// qEventInsert records an opened or resolved event, at most once each
	// per incident.
	qEventInsert = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING` + eventReturning
	qIncidentGet  = `SELECT ` + incidentCols + ` FROM incidents WHERE project_id = ? AND id = ?`
	qIncidentList = `SELECT ` + incidentCols + ` FROM incidents
		WHERE project_id = ?1 AND (?2 = '' OR monitor_id = ?2) AND (NOT ?3 OR resolved_at IS NULL)
			AND (?4 IS NULL OR resolved_at IS NULL OR resolved_at >= ?4)
		ORDER BY opened_at DESC, id DESC LIMIT ?5 OFFSET ?6`
	qIncidentExists = `SELECT EXISTS (SELECT 1 FROM incidents WHERE project_id = ? AND id = ?)`

	qIncidentEventList = `SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events
		WHERE project_id = ?1 AND (?2 = '' OR incident_id = ?2) ORDER BY id LIMIT ?3`
)

// statements are the hot path's statements, prepared once on the writer.
type statements struct {
	monitorLockBatch *sql.Stmt
	projectIDsByKey  *sql.Stmt
	monitorUpdate    *sql.Stmt
	incidentOpen     *sql.Stmt
	incidentUpdate   *sql.Stmt
	incidentResolve  *sql.Stmt
	eventInsert      *sql.Stmt

	// Multi-row statements for the rows of a batch.
	monitorUpdateState, pingInsert, runUpsert *bulk
}

func prepare(ctx context.Context, db *sql.DB) (*statements, error) {
	st := &statements{}
	for _, p := range []struct {
		dst        **bulk
		query, row string
	}{
		{&st.monitorUpdateState, qMonitorUpdateState, qMonitorUpdateStateRow},
		{&st.pingInsert, qPingInsert, qPingInsertRow},
		{&st.runUpsert, qRunUpsert, qRunUpsertRow},
	} {
		b, err := newBulk(ctx, db, p.query, p.row)
		if err != nil {
			return nil, errors.Join(err, st.close())
		}
		*p.dst = b
	}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&st.monitorLockBatch, qMonitorLockBatch},
		{&st.projectIDsByKey, qProjectIDsByPingKey},
		{&st.monitorUpdate, qMonitorUpdate},
		{&st.incidentOpen, qIncidentOpen},
		{&st.incidentUpdate, qIncidentUpdate},
		{&st.incidentResolve, qIncidentResolve},
		{&st.eventInsert, qEventInsert},
	} {
		s, err := db.PrepareContext(ctx, p.q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare: %w", err), st.close())
		}
		*p.dst = s
	}
	return st, nil
}

func (st *statements) close() error {
	var errs []error
	for _, s := range []*sql.Stmt{st.monitorLockBatch, st.projectIDsByKey, st.monitorUpdate,
		st.incidentOpen, st.incidentUpdate, st.incidentResolve, st.eventInsert} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	for _, b := range []*bulk{st.monitorUpdateState, st.pingInsert, st.runUpsert} {
		if b != nil {
			errs = append(errs, b.close())
		}
	}
	return errors.Join(errs...)
}

// bulk is a multi-row statement. A batch of n rows runs as chunks of
// powers of two rows, at most bulkMaxRows each, so that few statements per
// kind are prepared, all at open (the writer has one connection, busy
// inside a transaction), and any n takes few trips through the driver.
type bulk struct {
	byRows map[int]*sql.Stmt
}

// bulkMaxRows bounds the rows of one statement (SQLite allows 32766
// parameters).
const bulkMaxRows = 64

func newBulk(ctx context.Context, db *sql.DB, query, row string) (*bulk, error) {
	b := &bulk{byRows: make(map[int]*sql.Stmt)}
	for rows := 1; rows <= bulkMaxRows; rows *= 2 {
		q := fmt.Sprintf(query, strings.TrimSuffix(strings.Repeat(row+", ", rows), ", "))
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare: %w", err), b.close())
		}
		b.byRows[rows] = s
	}
	return b, nil
}

// chunks splits n rows into statement sizes: powers of two, largest first.
func chunks(n int) []int {
	var out []int
	for n > 0 {
		c := bulkMaxRows
		for c > n {
			c /= 2
		}
		out = append(out, c)
		n -= c
	}
	return out
}

// stmt returns the statement for rows rows, one of the sizes chunks gives.
func (b *bulk) stmt(rows int) *sql.Stmt { return b.byRows[rows] }

func (b *bulk) close() error {
	var errs []error
	for _, s := range b.byRows {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
