package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// qMonitorCountByStatus derives late as MonitorList does.
var qMonitorCountByStatus = `SELECT CASE WHEN ` + monitors.LateSQL("?1") + ` THEN 'late' ELSE status END,
	count(*) FROM monitors GROUP BY 1`

// qMonitorPageCounts counts a project's monitors by their status at ?2
// (StatusAtSQL), with the earliest instant after ?2 at which one turns
// late.
var qMonitorPageCounts = `SELECT ` + monitors.StatusAtSQL("?2") + `, count(*),
	min(next_expected_at) FILTER (WHERE status = 'up' AND next_expected_at > ?2)
	FROM monitors WHERE project_id = ?1 GROUP BY 1`

// rowVersionCols are all the columns of monitors
// (TestRowVersionCoversEveryColumn): with the count of its run prunings,
// the input of a row's version.
const rowVersionCols = monitorCols + `, status, last_ping_at, next_expected_at, person_fields`

// rowVersionArgs are the arguments of vigil_row_version for monitor m, r
// its monitor_runs_pruned row.
var rowVersionArgs = plan.Qualify("m.", rowVersionCols) + ", r.n"

// qMonitorListMarker: see Store.MonitorListMarker. A project without a
// row (none that exists) has marker 0.
const qMonitorListMarker = `SELECT CAST(coalesce((SELECT n FROM monitor_list_versions WHERE project_id = ?1), 0) AS TEXT)`

var (
	// qMonitorListedRows reads the monitors of a page that the caller
	// does not know at their version (plan.PageSQL.Rows).
	qMonitorListedRows = `SELECT ` + plan.Qualify("m.", monitorCols) + `, vigil_row_version(` + rowVersionArgs + `)
		FROM monitors AS m LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = m.id
		WHERE m.project_id = ?1 AND m.id IN (SELECT value FROM json_each(?2))`
)

const (
	qMonitorPageTags = `SELECT DISTINCT tags FROM monitors WHERE project_id = ?1`
	qRunPruned       = `INSERT INTO monitor_runs_pruned (monitor_id, n) VALUES (?1, 1)
		ON CONFLICT (monitor_id) DO UPDATE SET n = n + 1`
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
		created_at, updated_at, state, next_deadline, schedule_dialect, notify_output, description,
		min_runtime_seconds, early_seconds, too_often, depends_on, snoozed_until`

	qMonitorInsert = `INSERT INTO monitors (id, project_id, name, slug, tags, schedule_kind, schedule_expr,
		schedule_tz, every_seconds, grace_seconds, max_runtime_seconds, deadline_seconds, alert_on_failure,
		failure_threshold, recovery_threshold, overlap, channels, paused, source, discovered, retry_policy,
		ping_key, created_at, updated_at, status, state, last_ping_at, next_expected_at, next_deadline,
		schedule_dialect, notify_output, description, min_runtime_seconds, early_seconds, too_often, depends_on, snoozed_until)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
		?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37)`
	// qMonitorUpdate writes a monitor's whole row but its ID and project
	// (MonitorModify). It takes qMonitorInsert's arguments.
	qMonitorUpdate = `UPDATE monitors SET name = ?3, slug = ?4, tags = ?5, schedule_kind = ?6,
		schedule_expr = ?7, schedule_tz = ?8, every_seconds = ?9, grace_seconds = ?10,
		max_runtime_seconds = ?11, deadline_seconds = ?12, alert_on_failure = ?13, failure_threshold = ?14,
		recovery_threshold = ?15, overlap = ?16, channels = ?17, paused = ?18, source = ?19,
		discovered = ?20, retry_policy = ?21, ping_key = ?22, created_at = ?23, updated_at = ?24, status = ?25, state = ?26,
		last_ping_at = ?27, next_expected_at = ?28, next_deadline = ?29, schedule_dialect = ?30, notify_output = ?31,
		description = ?32, min_runtime_seconds = ?33, early_seconds = ?34, too_often = ?35, depends_on = ?36, snoozed_until = ?37
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
	// qMonitorLockByKeys is qMonitorLockBatch for a batch that names its
	// monitors by ping key only, the usual one: one index lookup per
	// monitor. The IN list is a set, so a key named twice yields its
	// monitor once.
	qMonitorLockByKeys = `SELECT ` + monitorCols + ` FROM monitors WHERE ping_key IN (SELECT value FROM json_each(?1))`
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
		remote_addr, user_agent, scheduled_at`
	// qPingInsert inserts many pings in one statement, one row of
	// qPingInsertRow each. AUTOINCREMENT gives each new row the ID after
	// the largest there ever was, so the n rows of one statement (pings has
	// no trigger to insert between them) take the n IDs that end with the
	// last inserted rowid, in row order.
	qPingInsert = `INSERT INTO pings (monitor_id, kind, at, rid, attempt, retry_at, exit_code, duration_ms,
		body, body_truncated, remote_addr, user_agent, scheduled_at) VALUES %s`
	qPingInsertRow      = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qPingCountByMonitor = `SELECT p.monitor_id, count(*) FROM pings p JOIN monitors m ON m.id = p.monitor_id
		WHERE m.project_id = ?1 AND p.monitor_id IN (SELECT value FROM json_each(?2)) GROUP BY p.monitor_id`
	qPingList = `SELECT ` + pingCols + ` FROM pings WHERE monitor_id = ?1 AND (?2 = 0 OR id < ?2)
		ORDER BY id DESC LIMIT coalesce(?3, -1)`
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
		ORDER BY seq DESC LIMIT coalesce(?3, -1)`

	incidentCols = `id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary,
		run_seq, ping_id, held, coalesce(suppressed_by, '')`
	// qIncidentOpen inserts an incident; the partial unique index allows one
	// open incident per monitor and kind, and a second is a no-op, never an
	// error that would fail a batch. When it inserted, qEventInsert records
	// the opened event.
	qIncidentOpen = `INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq, ping_id,
			held, suppressed_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''))
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
	// qIncidentRelease ends the hold of the open incident of a kind; its
	// reminders count from then. qReleasedEvent then reads its opened
	// event, at the release time, to be delivered now.
	qIncidentRelease = `UPDATE incidents SET held = 0, reminded_at = ?3
		WHERE monitor_id = ?1 AND kind = ?2 AND resolved_at IS NULL AND held RETURNING id`
	qReleasedEvent = `SELECT id, coalesce(incident_id, ''), monitor_id, project_id, kind, ?2, summary
		FROM incident_events WHERE incident_id = ?1 AND kind = 'incident.opened'`
	qIncidentGet  = `SELECT ` + incidentCols + ` FROM incidents WHERE project_id = ? AND id = ?`
	qIncidentList = `SELECT ` + incidentCols + ` FROM incidents
		WHERE project_id = ?1 AND (?2 = '' OR monitor_id = ?2) AND (NOT ?3 OR resolved_at IS NULL)
			AND (?4 IS NULL OR resolved_at IS NULL OR resolved_at >= ?4)
		ORDER BY opened_at DESC, id DESC LIMIT coalesce(?5, -1) OFFSET ?6`
	qIncidentExists = `SELECT EXISTS (SELECT 1 FROM incidents WHERE project_id = ? AND id = ?)`

	qIncidentEventList = `SELECT id, coalesce(incident_id, ''), monitor_id, project_id, kind, at, summary FROM incident_events
		WHERE project_id = ?1 AND (?2 = '' OR incident_id = ?2) ORDER BY id LIMIT coalesce(?3, -1)`

	// eventReturning, appended to a statement that inserts incident events,
	// returns them.
	eventReturning = ` RETURNING id, coalesce(incident_id, ''), monitor_id, project_id, kind, at, summary`
	// qIncidentClose ends the open incident of a kind without an event.
	qIncidentClose = `UPDATE incidents SET resolved_at = ?3, resolve_summary = ?4
		WHERE monitor_id = ?1 AND kind = ?2 AND resolved_at IS NULL`
	// qMonitorNotice records a monitor event: no incident.
	qMonitorNotice = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		VALUES (NULL, ?, ?, ?, ?, ?)` + eventReturning

	// Monitor events have no incident: their deliveries' incident_id is
	// NULL, read as ''.
	// Reports have no incident, monitor or event either: their
	// monitor_id and event_id are NULL, read as '' and 0.
	deliveryCols = `id, project_id, coalesce(incident_id, ''), coalesce(monitor_id, ''), channel_id, coalesce(event_id, 0),
		event, state, attempts, created_at, next_attempt_at, finished_at, coalesce(report_id, ''),
		group_at`
	// qDeliveryMonitors and qDeliveryChannels read what routing needs
	// (see plan.Route); qDeliveryPending the channels reminders skip.
	qDeliveryMonitors = `SELECT id, project_id, channels FROM monitors WHERE id IN (SELECT value FROM json_each(?1))`
	qDeliveryChannels = `SELECT project_id, id, kind, is_default, notify_late, group_seconds FROM channels
		WHERE project_id IN (SELECT value FROM json_each(?1)) ORDER BY id`
	qDeliveryPending = `SELECT incident_id, channel_id FROM deliveries
		WHERE incident_id IN (SELECT value FROM json_each(?1)) AND state = 'pending'`
	// qDeliveryInsert inserts routed deliveries to the channels that still
	// exist, one row of qDeliveryInsertRow per delivery, in the order of
	// the rows (column1), and returns the key of each with its ID: the
	// rest of the row is what was routed.
	qDeliveryInsert = `INSERT INTO deliveries (project_id, incident_id, event_id, event, monitor_id, channel_id,
			state, attempts, created_at, next_attempt_at, report_id, group_at)
		SELECT v.column2, nullif(v.column3, ''), nullif(v.column4, 0), v.column5, nullif(v.column6, ''), c.id,
			'pending', 0, v.column8, v.column8, nullif(v.column9, ''), v.column10
		FROM (VALUES %s) AS v JOIN channels c ON c.id = v.column7 AND c.project_id = v.column2
		ORDER BY v.column1
		RETURNING id, coalesce(event_id, 0), coalesce(report_id, ''), channel_id`
	qDeliveryInsertRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// qDeliveryGet also finds the earliest earlier delivery of the same
	// incident to the same channel that is still pending, or, for a
	// member of a group, the group's lowest pending delivery, which sends
	// it. A report's delivery has no event: its time is its creation's.
	qDeliveryGet = `SELECT d.id, d.project_id, coalesce(d.incident_id, ''), coalesce(d.monitor_id, ''), d.channel_id,
			coalesce(d.event_id, 0), d.event, d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at,
			coalesce(d.report_id, ''), d.group_at, coalesce(e.at, d.created_at), coalesce(e.summary, ''),
			coalesce(w.id, g.id, 0), coalesce(w.next_attempt_at, g.next_attempt_at)
		FROM deliveries d
		LEFT JOIN incident_events e ON e.id = d.event_id
		LEFT JOIN deliveries w ON w.id = (SELECT p.id FROM deliveries p
			WHERE p.incident_id = d.incident_id AND p.channel_id = d.channel_id AND p.event_id < d.event_id
				AND p.state = 'pending'
			ORDER BY p.event_id LIMIT 1)
		LEFT JOIN deliveries g ON g.id = (SELECT p.id FROM deliveries p
			WHERE d.group_at IS NOT NULL AND p.channel_id = d.channel_id AND p.group_at = d.group_at
				AND p.state = 'pending' AND p.id < d.id
			ORDER BY p.id LIMIT 1)
		WHERE d.project_id = ?1 AND d.id = ?2`
	qDeliveryGroup = `SELECT d.id, d.project_id, coalesce(d.incident_id, ''), d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, '', d.group_at, e.at, e.summary, 0, NULL
		FROM deliveries d JOIN incident_events e ON e.id = d.event_id
		WHERE d.project_id = ?1 AND d.channel_id = ?2 AND d.group_at = ?3 AND d.state = 'pending'
		ORDER BY d.id LIMIT coalesce(?4, -1)`
	qDeliveryGroupsOpen = `SELECT channel_id, max(group_at) FROM deliveries
		WHERE channel_id IN (SELECT value FROM json_each(?1)) AND state = 'pending' AND group_at IS NOT NULL
		GROUP BY channel_id`
	// qDeliveryLock reads the delivery in the write transaction. No FOR
	// UPDATE: the transaction holds SQLite's only write lock.
	qDeliveryLock   = `SELECT ` + deliveryCols + ` FROM deliveries WHERE project_id = ?1 AND id = ?2`
	qDeliveryUpdate = `UPDATE deliveries SET state = ?2, attempts = ?3, next_attempt_at = ?4, finished_at = ?5
		WHERE id = ?1`
	attemptCols = `id, delivery_id, project_id, incident_id, channel_id, event, attempt, started_at,
		finished_at, outcome, status_code, error, next_attempt_at`
	qAttemptInsert = `INSERT INTO delivery_attempts (delivery_id, project_id, incident_id, channel_id, event,
			attempt, started_at, finished_at, outcome, status_code, error, next_attempt_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING ` + attemptCols
	qDeliveryList = `SELECT d.id, d.project_id, coalesce(d.incident_id, ''), d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, '', d.group_at, e.at, e.summary, 0, NULL
		FROM deliveries d JOIN incident_events e ON e.id = d.event_id
		WHERE d.project_id = ?1 AND d.incident_id IN (SELECT value FROM json_each(?2))
		ORDER BY d.incident_id, d.event_id, d.channel_id`
	qAttemptList = `SELECT ` + attemptCols + ` FROM delivery_attempts
		WHERE project_id = ?1 AND incident_id IN (SELECT value FROM json_each(?2)) ORDER BY delivery_id, attempt`
	// qIncidentRemind stamps the open incidents due for a reminder. One
	// writer at a time: no two calls remind one incident twice.
	qIncidentRemind = `UPDATE incidents SET reminded_at = ?1
		WHERE id IN (SELECT id FROM incidents
			WHERE resolved_at IS NULL AND NOT held AND coalesce(reminded_at, opened_at) <= ?2
				AND NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = incidents.monitor_id AND m.snoozed_until > ?1)
			ORDER BY opened_at, id LIMIT ?3)
		RETURNING id, project_id, monitor_id, summary`
	qReminderInsert = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		VALUES (?, ?, ?, 'incident.reminder', ?, ?)` + eventReturning

	// qHeartbeatLock reads the one heartbeat row. No FOR UPDATE: it runs in
	// a write transaction, and SQLite has one writer.
	qHeartbeatLock  = `SELECT last_pass_at FROM evaluator_heartbeat WHERE id = 1`
	qHeartbeatStamp = `UPDATE evaluator_heartbeat SET last_pass_at = ? WHERE id = 1`

	outageCols       = `id, started_at, ended_at, monitors_postponed, settled_at`
	qOutageUnsettled = `SELECT ` + outageCols + ` FROM outages WHERE settled_at IS NULL ORDER BY id LIMIT 1`
	qOutageInsert    = `INSERT INTO outages (started_at, ended_at) VALUES (?, ?) RETURNING ` + outageCols
	qOutageExtend    = `UPDATE outages SET ended_at = ?2 WHERE id = ?1 RETURNING ` + outageCols
	// qOutageSettle settles an outage once no unpaused monitor is due at or
	// before its end (monitors_due_idx answers).
	qOutageSettle = `UPDATE outages SET settled_at = ?2 WHERE id = ?1 AND NOT EXISTS (
			SELECT 1 FROM monitors WHERE NOT paused AND next_deadline <= outages.ended_at)
		RETURNING ` + outageCols
	// qOutagePostponed counts monitors an outage postponed, in the claim's
	// transaction. An outage is named by its start, which extending it
	// does not change.
	qOutagePostponed = `UPDATE outages SET monitors_postponed = monitors_postponed + ?2 WHERE started_at = ?1`
	qOutageList      = `SELECT ` + outageCols + ` FROM outages WHERE (?1 = 0 OR id < ?1) ORDER BY id DESC LIMIT coalesce(?2, -1)`

	channelCols    = `id, project_id, kind, name, config, is_default, created_at, updated_at, notify_late, group_seconds, report`
	qChannelCreate = `INSERT INTO channels (` + channelCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qChannelGet    = `SELECT ` + channelCols + ` FROM channels WHERE project_id = ? AND id = ?`
	qChannelList   = `SELECT ` + channelCols + ` FROM channels WHERE project_id = ?1 ORDER BY name, id
		LIMIT coalesce(?2, -1) OFFSET ?3`
	qChannelUpdate = `UPDATE channels SET name = ?3, config = ?4, is_default = ?5, updated_at = ?6,
			notify_late = ?7, group_seconds = ?8, report = ?9
		WHERE project_id = ?1 AND id = ?2`
	qChannelUsers = `SELECT slug FROM monitors WHERE project_id = ?1
		AND EXISTS (SELECT 1 FROM json_each(channels) WHERE value = ?2) ORDER BY slug`
	qChannelDelete = `DELETE FROM channels WHERE project_id = ? AND id = ?`
	qLateChannels  = `SELECT project_id, id, is_default FROM channels
		WHERE project_id IN (SELECT value FROM json_each(?1)) AND notify_late`

	qMonitorPersonFieldsGet = `SELECT person_fields FROM monitors WHERE project_id = ? AND id = ?`
	qMonitorPersonFieldsSet = `UPDATE monitors SET person_fields = ?3 WHERE project_id = ?1 AND id = ?2`
	qMonitorPersonFields    = `SELECT id, person_fields FROM monitors
		WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND person_fields <> '[]'`
	// qMonitorSyncLock loads the monitors a declaration may touch. No FOR
	// UPDATE: the write transaction holds SQLite's only write lock.
	qMonitorSyncLock = `SELECT ` + monitorCols + `, person_fields FROM monitors
		WHERE project_id = ?1 AND (source = ?2 OR slug IN (SELECT value FROM json_each(?3))) ORDER BY id`

	qIncidentCountByKind = `SELECT kind, count(*), sum(resolved_at IS NULL) FROM incidents GROUP BY kind ORDER BY kind`

	qProjectBadgeKey = `SELECT coalesce(badge_key, '') FROM projects WHERE id = ?`
	// qProjectBadgeKeySet keeps a key another process set first.
	qProjectBadgeKeySet = `UPDATE projects SET badge_key = coalesce(badge_key, ?2) WHERE id = ?1 RETURNING badge_key`

	userCols          = `id, email, password_hash, created_at, disabled_at`
	qUserInsert       = `INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)`
	qUserCount        = `SELECT count(*) FROM users`
	qUserGet          = `SELECT ` + userCols + ` FROM users WHERE id = ?`
	qUserGetByEmail   = `SELECT ` + userCols + ` FROM users WHERE email = ?`
	qUserExists       = `SELECT EXISTS (SELECT 1 FROM users)`
	qProjectMemberAdd = `INSERT INTO project_members (project_id, user_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (project_id, user_id) DO NOTHING`
	qProjectListByUser = `SELECT p.id, p.name, p.ping_key, p.created_at FROM projects p
		JOIN project_members pm ON pm.project_id = p.id WHERE pm.user_id = ? ORDER BY p.created_at, p.id`
	qProjectRename = `UPDATE projects SET name = ?2 WHERE id = ?1 RETURNING id, name, ping_key, created_at`

	sessionCols    = `id, user_id, token_hash, csrf_token, created_at, expires_at`
	qSessionInsert = `INSERT INTO sessions (id, user_id, token_hash, csrf_token, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	qSessionGet           = `SELECT ` + sessionCols + ` FROM sessions WHERE token_hash = ? AND expires_at > ?`
	qSessionExtend        = `UPDATE sessions SET expires_at = ?2 WHERE id = ?1`
	qSessionDelete        = `DELETE FROM sessions WHERE token_hash = ?`
	qSessionDeleteExpired = `DELETE FROM sessions WHERE expires_at <= ?`

	// qRunListRecent takes the newest runs of each monitor. SQLite has no
	// LATERAL join: the bound on seq, the seq of the run just too old to
	// be kept, depends only on the monitor, so it is computed once per
	// monitor and the runs are read as one range of the primary key.
	qRunListRecent = `SELECT r.monitor_id, r.seq, r.rid, r.started_at, r.finished_at, r.outcome, r.duration_ms,
			r.attempt, r.exit_code, r.will_retry, r.stuck
		FROM monitors m JOIN runs r ON r.monitor_id = m.id AND r.seq > coalesce(
			(SELECT r2.seq FROM runs r2 WHERE r2.monitor_id = m.id ORDER BY r2.seq DESC LIMIT 1 OFFSET ?3), -1)
		WHERE m.project_id = ?1 AND m.id IN (SELECT value FROM json_each(?2))
		ORDER BY r.monitor_id, r.seq DESC`
	// qRunBriefList reads the same runs as qRunListRecent, only their
	// outcome and duration, as one text per monitor.
	qRunBriefList = `SELECT id, runs FROM (
			SELECT m.id, (SELECT group_concat(r.outcome || ':' || coalesce(r.duration_ms, ''), ',' ORDER BY r.seq DESC)
				FROM (SELECT seq, outcome, duration_ms FROM runs WHERE runs.monitor_id = m.id ORDER BY seq DESC LIMIT ?3) r) AS runs
			FROM monitors m
			WHERE m.project_id = ?1 AND m.id IN (SELECT value FROM json_each(?2)))
		WHERE runs IS NOT NULL`
)

// statements are the hot path's statements, prepared once on the writer.
type statements struct {
	monitorLockBatch *sql.Stmt
	monitorLockKeys  *sql.Stmt
	projectIDsByKey  *sql.Stmt
	monitorUpdate    *sql.Stmt
	incidentOpen     *sql.Stmt
	incidentUpdate   *sql.Stmt
	incidentResolve  *sql.Stmt
	eventInsert      *sql.Stmt

	// Multi-row statements for the rows of a batch.
	monitorUpdateState, pingInsert, runUpsert, deliveryInsert *bulk
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
		{&st.deliveryInsert, qDeliveryInsert, qDeliveryInsertRow},
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
		{&st.monitorLockKeys, qMonitorLockByKeys},
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
	for _, s := range []*sql.Stmt{st.monitorLockBatch, st.monitorLockKeys, st.projectIDsByKey, st.monitorUpdate,
		st.incidentOpen, st.incidentUpdate, st.incidentResolve, st.eventInsert} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	for _, b := range []*bulk{st.monitorUpdateState, st.pingInsert, st.runUpsert, st.deliveryInsert} {
		if b != nil {
			errs = append(errs, b.close())
		}
	}
	return errors.Join(errs...)
}

// bulk is a multi-row statement. A batch of n rows runs as at most two
// statements while n is at most bulkMaxRows (see chunks), so that few
// statements per kind are prepared, all at open (the writer has one
// connection, busy inside a transaction), and any n takes few trips
// through the driver: each run of a statement costs the writer the same
// CPU whatever its rows, its binding, statement journal and reset (about
// 7 to 30 µs: docs/benchmarks.md, Ingest, seventh round on SQLite).
type bulk struct {
	byRows map[int]*sql.Stmt
}

const (
	// bulkMaxRows bounds the rows of one statement (SQLite allows 32766
	// parameters).
	bulkMaxRows = 64
	// bulkStep is the size under which every row count has a statement of
	// its own; above it, the multiples of bulkStep up to bulkMaxRows.
	bulkStep = 16
)

// bulkSizes are the row counts a bulk statement is prepared for: 1 to
// bulkStep, then every multiple of bulkStep up to bulkMaxRows.
func bulkSizes() []int {
	var out []int
	for n := 1; n <= bulkStep; n++ {
		out = append(out, n)
	}
	for n := 2 * bulkStep; n <= bulkMaxRows; n += bulkStep {
		out = append(out, n)
	}
	return out
}

func newBulk(ctx context.Context, db *sql.DB, query, row string) (*bulk, error) {
	b := &bulk{byRows: make(map[int]*sql.Stmt)}
	for _, rows := range bulkSizes() {
		q := fmt.Sprintf(query, strings.TrimSuffix(strings.Repeat(row+", ", rows), ", "))
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare: %w", err), b.close())
		}
		b.byRows[rows] = s
	}
	return b, nil
}

// chunks splits n rows into statement sizes, largest first: as many full
// statements of bulkMaxRows as fit, then the largest multiple of bulkStep
// below what is left, then the rest, so that n up to bulkMaxRows takes at
// most two statements (where powers of two took up to seven).
func chunks(n int) []int {
	var out []int
	for n > 0 {
		c := min(n, bulkMaxRows)
		if c > bulkStep {
			c -= c % bulkStep
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

// queries are the statements the planning layer runs itself.
var queries = plan.Queries{
	ProjectCreate: qProjectCreate, ProjectGet: qProjectGet, ProjectGetByPingKey: qProjectGetByPingKey,
	ProjectList: qProjectList, ProjectListByUser: qProjectListByUser, ProjectRename: qProjectRename,
	ProjectMemberAdd: qProjectMemberAdd, ProjectBadgeKey: qProjectBadgeKey, ProjectBadgeKeySet: qProjectBadgeKeySet,

	APIKeyCreate: qAPIKeyCreate, APIKeyGetByHash: qAPIKeyGetByHash, APIKeyList: qAPIKeyList, APIKeyRevoke: qAPIKeyRevoke,

	// No FOR UPDATE in MonitorLock, ChannelLock, DeliveryLock and
	// SourceMonitors: SQLite's write transaction, begun IMMEDIATE, holds its
	// only write lock.
	MonitorInsert: qMonitorInsert, MonitorUpdate: qMonitorUpdate, MonitorGet: qMonitorGet, MonitorLock: qMonitorGet,
	MonitorGetBySlug: qMonitorGetBySlug, MonitorGetByPingKey: qMonitorGetByPingKey,
	MonitorDelete: qMonitorDelete, MonitorExists: qMonitorExists, MonitorPostpone: qMonitorPostpone,
	MonitorNextDeadline: qMonitorNextDeadline, MonitorCountByStatus: qMonitorCountByStatus,
	MonitorPersonFields: qMonitorPersonFields, PersonFieldsGet: qMonitorPersonFieldsGet,
	PersonFieldsSet: qMonitorPersonFieldsSet, SourceMonitors: qMonitorSyncLock,

	PingList: qPingList, RunList: qRunList, RunListRecent: qRunListRecent, RunBriefList: qRunBriefList, PingPruneCutoffs: qPingPruneCutoffs,
	PingPrune: qPingPrune, RunPrune: qRunPrune, RunPruned: qRunPruned, PingCountByMonitor: qPingCountByMonitor,

	IncidentGet: qIncidentGet, IncidentList: qIncidentList, IncidentExists: qIncidentExists,
	IncidentEventList: qIncidentEventList, IncidentCountByKind: qIncidentCountByKind,

	HeartbeatLock: qHeartbeatLock, HeartbeatStamp: qHeartbeatStamp, OutageUnsettled: qOutageUnsettled,
	OutageInsert: qOutageInsert, OutageExtend: qOutageExtend, OutageSettle: qOutageSettle,
	OutagePostponed: qOutagePostponed, OutageList: qOutageList,

	ReportQueries: plan.ReportQueries{
		ReportChannels: `SELECT c.id, c.project_id, c.report,
				(SELECT max(r.period_start) FROM reports r WHERE r.channel_id = c.id AND r.period = c.report)
			FROM channels c WHERE c.report <> '' ORDER BY c.id`,
		ReportInsert: `INSERT INTO reports (id, project_id, channel_id, period, period_start, period_end, created_at, body)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
		ReportGet: `SELECT body FROM reports WHERE project_id = ?1 AND id = ?2`,
	},
	ChannelCreate: qChannelCreate, ChannelGet: qChannelGet, ChannelLock: qChannelGet, ChannelList: qChannelList,
	ChannelUpdate: qChannelUpdate, ChannelUsers: qChannelUsers, ChannelDelete: qChannelDelete,
	LateChannels: qLateChannels,

	DeliveryGet: qDeliveryGet, DeliveryList: qDeliveryList, DeliveryGroup: qDeliveryGroup, DeliveryGroupsOpen: qDeliveryGroupsOpen, DeliveryLock: qDeliveryLock, DeliveryUpdate: qDeliveryUpdate,
	AttemptInsert: qAttemptInsert, AttemptList: qAttemptList,

	UserExists: qUserExists, UserInsert: qUserInsert, UserCount: qUserCount, UserGet: qUserGet,
	UserGetByEmail: qUserGetByEmail,

	SessionInsert: qSessionInsert, SessionGet: qSessionGet, SessionExtend: qSessionExtend,
	SessionDelete: qSessionDelete, SessionDeleteExpired: qSessionDeleteExpired,

	LifecycleQueries:   lifecycleQueries,
	SecretQueries:      secretQueries,
	UptimeQueries:      uptimeQueries,
	MaintenanceQueries: maintenanceQueries,
	StatusPageQueries:  statusPageQueries,
	DependencyQueries:  dependencyQueries,
}

// dependencyQueries are the statements of held notifications across
// monitors.
var dependencyQueries = plan.DependencyQueries{
	ParentIncidents: `SELECT monitor_id, id, kind FROM incidents
		WHERE monitor_id IN (SELECT value FROM json_each(?1)) AND resolved_at IS NULL ORDER BY opened_at, id`,
	DependencyGraph: `SELECT id, slug, depends_on FROM monitors WHERE project_id = ?1`,
	DependentsWake: `UPDATE monitors SET next_deadline = ?3
		WHERE project_id = ?1 AND EXISTS (SELECT 1 FROM json_each(monitors.depends_on) WHERE value = ?2) AND NOT paused
			AND (next_deadline IS NULL OR next_deadline > ?3)
			AND EXISTS (SELECT 1 FROM incidents i WHERE i.monitor_id = monitors.id AND i.resolved_at IS NULL AND i.held)`,
}

// maintenanceQueries are the statements of maintenance windows, each kept
// whole as a JSON document.
var maintenanceQueries = plan.MaintenanceQueries{
	MaintenanceInsert: `INSERT INTO maintenance_windows (id, project_id, doc) VALUES (?1, ?2, ?3)`,
	MaintenanceGet:    `SELECT doc FROM maintenance_windows WHERE project_id = ?1 AND id = ?2`,
	MaintenanceLock:   `SELECT doc FROM maintenance_windows WHERE project_id = ?1 AND id = ?2`,
	MaintenanceList:   `SELECT doc FROM maintenance_windows WHERE project_id = ?1 ORDER BY id`,
	MaintenanceUpdate: `UPDATE maintenance_windows SET doc = ?3 WHERE project_id = ?1 AND id = ?2`,
	MaintenanceDelete: `DELETE FROM maintenance_windows WHERE project_id = ?1 AND id = ?2`,
}

// statusPageQueries are the statements of status pages and incident notes,
// each kept whole as a JSON document.
var statusPageQueries = plan.StatusPageQueries{
	StatusPageInsert:    `INSERT INTO status_pages (id, project_id, slug, doc) VALUES (?1, ?2, ?3, ?4)`,
	StatusPageGet:       `SELECT doc FROM status_pages WHERE project_id = ?1 AND id = ?2`,
	StatusPageLock:      `SELECT doc FROM status_pages WHERE project_id = ?1 AND id = ?2`,
	StatusPageGetBySlug: `SELECT doc FROM status_pages WHERE slug = ?1`,
	StatusPageList:      `SELECT doc FROM status_pages WHERE project_id = ?1 ORDER BY slug`,
	StatusPageUpdate:    `UPDATE status_pages SET slug = ?3, doc = ?4 WHERE project_id = ?1 AND id = ?2`,
	StatusPageDelete:    `DELETE FROM status_pages WHERE project_id = ?1 AND id = ?2`,
	NoteInsert:          `INSERT INTO incident_notes (id, project_id, incident_id, doc) VALUES (?1, ?2, ?3, ?4)`,
	NoteCount:           `SELECT count(*) FROM incident_notes WHERE incident_id = ?1`,
	NoteList:            `SELECT doc FROM incident_notes WHERE project_id = ?1 AND incident_id IN (SELECT value FROM json_each(?2))`,
	NoteDelete:          `DELETE FROM incident_notes WHERE project_id = ?1 AND id = ?2`,
}
