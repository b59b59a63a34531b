package pgstore

// The store's SQL. sqlitestore has a query of the same name for each, so the
// two can be read side by side.

import (
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// qMonitorCountByStatus derives late as MonitorList does.
var qMonitorCountByStatus = `SELECT CASE WHEN ` + monitors.LateSQL("$1") + ` THEN 'late' ELSE status END,
	count(*) FROM monitors GROUP BY 1`

// qMonitorPageCounts counts a project's monitors by their status at $2
// (StatusAtSQL), with the earliest instant after $2 at which one turns
// late, and lists their distinct lists of tags, in one scan
// (plan.PageSQL.Counts without Tags): hashing the lists, not sorting
// them, whatever the planner's estimates.
var qMonitorPageCounts = `SELECT CASE WHEN grouping(tags) = 1 THEN ` + monitors.StatusAtSQL("$2") + ` END, count(*),
	min(next_expected_at) FILTER (WHERE status = 'up' AND next_expected_at > $2),
	CASE WHEN grouping(tags) = 0 THEN tags END
	FROM monitors WHERE project_id = $1 GROUP BY GROUPING SETS ((` + monitors.StatusAtSQL("$2") + `), (tags))`

// qMonitorListedRows reads the monitors of a page that the caller does not
// know at their version (plan.PageSQL.Rows).
var qMonitorListedRows = `SELECT ` + plan.Qualify("m.", monitorCols) + `, ` + rowVersion + `
	FROM monitors AS m LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = m.id
	WHERE m.project_id = $1 AND m.id = ANY($2::text[])`

// qMonitorListMarker: see Store.MonitorListMarker.
var qMonitorListMarker = `SELECT count(*)::text || '.' || coalesce(sum(hashtextextended(` + rowVersion + `, 0)), 0)::text
	FROM monitors AS m LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = m.id WHERE m.project_id = $1`

// rowVersion is the version of monitor m's row (see
// Store.MonitorListPage), with r its monitor_runs_pruned row.
var rowVersion = versionOf("m")

// versionOf is the version of the row of monitor t, a table or subquery
// with the columns id and xmin of monitors, with r its
// monitor_runs_pruned row.
func versionOf(t string) string {
	return t + `.id || '.' || ` + t + `.xmin::text || '.' || coalesce(r.n, 0)::text`
}

const (
	qRunPruned = `INSERT INTO monitor_runs_pruned (monitor_id, n) VALUES ($1, 1)
		ON CONFLICT (monitor_id) DO UPDATE SET n = monitor_runs_pruned.n + 1`

	qProjectCreate       = `INSERT INTO projects (id, name, ping_key, created_at) VALUES ($1, $2, $3, $4)`
	qProjectGet          = `SELECT id, name, ping_key, created_at FROM projects WHERE id = $1`
	qProjectGetByPingKey = `SELECT id, name, ping_key, created_at FROM projects WHERE ping_key = $1`
	qProjectList         = `SELECT id, name, ping_key, created_at FROM projects ORDER BY created_at, id`
	// qProjectIDsByPingKey resolves the project ping keys of a batch.
	qProjectIDsByPingKey = `SELECT id, ping_key FROM projects WHERE ping_key = ANY($1::text[])`

	apiKeyCols       = `id, project_id, name, prefix, hash, read_only, created_at, last_used_at, revoked_at`
	qAPIKeyCreate    = `INSERT INTO api_keys (id, project_id, name, prefix, hash, read_only, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	qAPIKeyGetByHash = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`
	qAPIKeyList      = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE project_id = $1 ORDER BY created_at, id`
	// qAPIKeyRevoke keeps the first revocation time when a key is revoked
	// twice.
	qAPIKeyRevoke = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3) WHERE project_id = $1 AND id = $2`

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
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37)`
	// qMonitorUpdate writes a monitor's whole row but its ID and project
	// (MonitorModify). It takes qMonitorInsert's arguments.
	qMonitorUpdate = `UPDATE monitors SET name = $3, slug = $4, tags = $5, schedule_kind = $6,
		schedule_expr = $7, schedule_tz = $8, every_seconds = $9, grace_seconds = $10,
		max_runtime_seconds = $11, deadline_seconds = $12, alert_on_failure = $13, failure_threshold = $14,
		recovery_threshold = $15, overlap = $16, channels = $17, paused = $18, source = $19,
		discovered = $20, retry_policy = $21, ping_key = $22, created_at = $23, updated_at = $24, status = $25, state = $26,
		last_ping_at = $27, next_expected_at = $28, next_deadline = $29, schedule_dialect = $30, notify_output = $31,
		description = $32, min_runtime_seconds = $33, early_seconds = $34, too_often = $35, depends_on = $36, snoozed_until = $37
		WHERE id = $1 AND project_id = $2`
	// qMonitorUpdateState writes the evaluated state of many monitors in one
	// statement (PingRecordBatch, MonitorEvaluateDue).
	qMonitorUpdateState = `UPDATE monitors AS m SET status = u.status, state = u.state,
		last_ping_at = u.last_ping_at, next_expected_at = u.next_expected_at, next_deadline = u.next_deadline
		FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
			AS u(id, status, state, last_ping_at, next_expected_at, next_deadline)
		WHERE m.id = u.id`
	qMonitorGet                = `SELECT ` + monitorCols + ` FROM monitors WHERE project_id = $1 AND id = $2`
	qMonitorGetForUpdate       = qMonitorGet + ` FOR UPDATE`
	qMonitorGetBySlug          = `SELECT ` + monitorCols + ` FROM monitors WHERE project_id = $1 AND slug = $2`
	qMonitorGetBySlugForUpdate = qMonitorGetBySlug + ` FOR UPDATE`
	qMonitorGetByPingKey       = `SELECT ` + monitorCols + ` FROM monitors WHERE ping_key = $1`
	qMonitorExists             = `SELECT EXISTS (SELECT 1 FROM monitors WHERE project_id = $1 AND id = $2)`
	qMonitorDelete             = `DELETE FROM monitors WHERE project_id = $1 AND id = $2`
	// qMonitorLockBatch loads and locks every monitor a batch of pings names,
	// by ping key or by project ping key and slug, in one query. The rows
	// are found through monitors_ping_key_key and, for the slugs (an
	// InitPlan of their IDs), monitors_pkey, one bitmap of both, and locked
	// in ID order, the same in every transaction, so two batches that share
	// monitors wait for each other instead of deadlocking. (Finding the
	// IDs by ping key first and then the rows by ID looked every monitor up
	// in two indexes: about twice the buffers and 0.15 ms more a batch of
	// 40; docs/benchmarks.md, Ingest, sixth round on PostgreSQL.)
	qMonitorLockBatch = `SELECT ` + monitorCols + ` FROM monitors WHERE ping_key = ANY($1::text[]) OR id = ANY(ARRAY(
			SELECT m.id FROM unnest($2::text[], $3::text[]) AS k(project_ping_key, slug)
				JOIN projects p ON p.ping_key = k.project_ping_key
				CROSS JOIN LATERAL (SELECT id FROM monitors WHERE project_id = p.id AND slug = k.slug) m))
		ORDER BY id FOR UPDATE`
	// qMonitorClaimDue claims due monitors. SKIP LOCKED lets evaluators on
	// several replicas share the work: a row another evaluator (or ingest)
	// holds is left to it, and is not evaluated twice for one deadline.
	//
	// The due index is monitor_deadlines' (migration 0015: on monitors it
	// would keep every ping's update from being HOT). Triggers keep it in
	// the same transaction as the monitor; the claim still checks the
	// deadline of the monitors row it locks, which PostgreSQL re-reads when
	// the row changed since the query began, so a monitor a ping has just
	// moved on is not claimed.
	qMonitorClaimDue = `SELECT ` + monitorCols + ` FROM monitor_deadlines d JOIN monitors ON monitors.id = d.monitor_id
		WHERE d.due_at <= $1 AND NOT paused AND next_deadline <= $1
		ORDER BY d.due_at LIMIT $2 FOR UPDATE OF monitors SKIP LOCKED`
	// qMonitorPostpone moves the deadline of a monitor that cannot be evaluated.
	qMonitorPostpone     = `UPDATE monitors SET next_deadline = $2 WHERE id = $1`
	qMonitorNextDeadline = `SELECT min(due_at) FROM monitor_deadlines`

	pingCols = `id, monitor_id, kind, at, rid, attempt, retry_at, exit_code, duration_ms, body, body_truncated,
		remote_addr, user_agent, scheduled_at`
	// qPingIDs reserves IDs for a batch's pings before they are written, so
	// that incidents can name the ping that opened them and the pings can go
	// in with one statement.
	qPingIDs = `SELECT nextval('pings_id_seq') FROM generate_series(1, $1)`
	// qBatchProjects reads, with a batch's load, what the batch reads of
	// each project it names (the projects $3, those of the monitors of the
	// ping keys $1 and those of the project ping keys $2): its maintenance
	// windows (MaintenanceList) and its channels that take late warnings
	// (LateChannels), one row a project. $3 are the projects the store
	// knows the ping keys of (projectsByKey), which $1 then leaves out.
	qBatchProjects = `WITH p(id) AS (SELECT unnest($3::text[])
			UNION SELECT project_id FROM monitors WHERE ping_key = ANY($1::text[])
			UNION SELECT id FROM projects WHERE ping_key = ANY($2::text[]))
		SELECT p.id, ARRAY(SELECT w.doc FROM maintenance_windows w WHERE w.project_id = p.id ORDER BY w.id),
			ARRAY(SELECT c.id FROM channels c WHERE c.project_id = p.id AND c.notify_late ORDER BY c.id),
			ARRAY(SELECT c.is_default FROM channels c WHERE c.project_id = p.id AND c.notify_late ORDER BY c.id)
		FROM p`
	qPingInsert = `INSERT INTO pings (` + pingCols + `)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::integer[],
			$7::timestamptz[], $8::integer[], $9::bigint[], $10::text[], $11::boolean[], $12::text[], $13::text[],
			$14::timestamptz[])`
	qPingCountByMonitor = `SELECT p.monitor_id, count(*) FROM pings p JOIN monitors m ON m.id = p.monitor_id
		WHERE m.project_id = $1 AND p.monitor_id = ANY($2::text[]) GROUP BY p.monitor_id`
	qPingList = `SELECT ` + pingCols + ` FROM pings WHERE monitor_id = $1 AND ($2::bigint = 0 OR id < $2::bigint)
		ORDER BY id DESC LIMIT $3`
	// qPingPruneCutoffs finds, for a chunk of monitors in ID order, the
	// newest ping and run that are no longer kept.
	qPingPruneCutoffs = `SELECT m.id,
			(SELECT p.id FROM pings p WHERE p.monitor_id = m.id ORDER BY p.id DESC OFFSET $2 LIMIT 1),
			(SELECT r.seq FROM runs r WHERE r.monitor_id = m.id ORDER BY r.seq DESC OFFSET $3 LIMIT 1)
		FROM monitors m WHERE m.id > $1 ORDER BY m.id LIMIT $4`
	qPingPrune = `DELETE FROM pings WHERE id IN (
		SELECT id FROM pings WHERE monitor_id = $1 AND id <= $2 ORDER BY id LIMIT $3)`
	qRunPrune = `DELETE FROM runs WHERE monitor_id = $1 AND seq IN (
		SELECT seq FROM runs WHERE monitor_id = $1 AND seq <= $2 ORDER BY seq LIMIT $3)`

	runCols = `monitor_id, seq, rid, started_at, finished_at, outcome, duration_ms, attempt, exit_code,
		will_retry, stuck`
	// qRunUpsert writes runs keyed by (monitor, seq); each change carries the
	// whole run, so the latest wins.
	qRunUpsert = `INSERT INTO runs (` + runCols + `)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[],
			$6::text[], $7::bigint[], $8::integer[], $9::integer[], $10::boolean[], $11::boolean[])
		ON CONFLICT (monitor_id, seq) DO UPDATE SET rid = excluded.rid, started_at = excluded.started_at,
			finished_at = excluded.finished_at, outcome = excluded.outcome, duration_ms = excluded.duration_ms,
			attempt = excluded.attempt, exit_code = excluded.exit_code, will_retry = excluded.will_retry,
			stuck = excluded.stuck`
	qRunList = `SELECT ` + runCols + ` FROM runs WHERE monitor_id = $1 AND ($2::bigint = 0 OR seq < $2::bigint)
		ORDER BY seq DESC LIMIT $3`

	incidentCols = `id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary,
		run_seq, ping_id, held, coalesce(suppressed_by, '')`
	// qIncidentOpen inserts an incident and its opened event. The partial
	// unique index allows one open incident per monitor and kind; a second
	// is a no-op, never an error that would fail a batch.
	qIncidentOpen = `WITH ins AS (
			INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq, ping_id, held, suppressed_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''))
			ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING
			RETURNING id, project_id, monitor_id, opened_at, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.opened', opened_at, summary FROM ins`
	// qIncidentUpdate records new facts about the open incident of a kind;
	// the incident keeps its opening summary.
	qIncidentUpdate = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.updated', $3, $4 FROM incidents
		WHERE monitor_id = $1 AND kind = $2 AND resolved_at IS NULL`
	// qIncidentResolve resolves the open incident of a kind, with its
	// resolved event.
	qIncidentResolve = `WITH res AS (
			UPDATE incidents SET resolved_at = $3, resolve_summary = $4
			WHERE monitor_id = $1 AND kind = $2 AND resolved_at IS NULL
			RETURNING id, project_id, monitor_id)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.resolved', $3, $4 FROM res
		ON CONFLICT DO NOTHING`
	// qIncidentRelease ends the hold of the open incident of a kind and
	// returns its opened event, at the release time ($3), to be delivered
	// now; its reminders count from then.
	qIncidentRelease = `WITH rel AS (
			UPDATE incidents SET held = false, reminded_at = $3
			WHERE monitor_id = $1 AND kind = $2 AND resolved_at IS NULL AND held
			RETURNING id)
		SELECT e.id, coalesce(e.incident_id, ''), e.monitor_id, e.project_id, e.kind, $3::timestamptz, e.summary
		FROM incident_events e JOIN rel ON e.incident_id = rel.id WHERE e.kind = 'incident.opened'`
	qIncidentGet  = `SELECT ` + incidentCols + ` FROM incidents WHERE project_id = $1 AND id = $2`
	qIncidentList = `SELECT ` + incidentCols + ` FROM incidents
		WHERE project_id = $1 AND ($2 = '' OR monitor_id = $2) AND (NOT $3 OR resolved_at IS NULL)
			AND ($4::timestamptz IS NULL OR resolved_at IS NULL OR resolved_at >= $4)
		ORDER BY opened_at DESC, id DESC LIMIT $5 OFFSET $6`
	qIncidentExists = `SELECT EXISTS (SELECT 1 FROM incidents WHERE project_id = $1 AND id = $2)`

	qIncidentEventList = `SELECT id, coalesce(incident_id, ''), monitor_id, project_id, kind, at, summary FROM incident_events
		WHERE project_id = $1 AND ($2 = '' OR incident_id = $2) ORDER BY id LIMIT $3`

	// eventReturning, appended to a statement that inserts incident events,
	// returns them; openedReturning, appended to qIncidentOpenMany, the ID
	// of each event with its incident's (see openedRows).
	eventReturning  = ` RETURNING id, coalesce(incident_id, ''), monitor_id, project_id, kind, at, summary`
	openedReturning = ` RETURNING id, incident_id`
	// qIncidentClose ends the open incident of a kind without an event.
	qIncidentClose = `UPDATE incidents SET resolved_at = $3, resolve_summary = $4
		WHERE monitor_id = $1 AND kind = $2 AND resolved_at IS NULL`
	// qMonitorNotice records a monitor event: no incident.
	qMonitorNotice = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		VALUES (NULL, $1, $2, $3, $4, $5)` + eventReturning

	// Monitor events have no incident: their deliveries' incident_id is
	// NULL, read as ''.
	// Reports have no incident, monitor or event either: their
	// monitor_id and event_id are NULL, read as '' and 0.
	deliveryCols = `id, project_id, coalesce(incident_id, ''), coalesce(monitor_id, ''), channel_id, coalesce(event_id, 0),
		event, state, attempts, created_at, next_attempt_at, finished_at, coalesce(report_id, ''),
		group_at`
	// qDeliveryMonitors and qDeliveryChannels read what routing needs
	// (see plan.Route); qDeliveryPending the channels reminders skip.
	qDeliveryMonitors = `SELECT id, project_id, channels FROM monitors WHERE id = ANY($1::text[])`
	qDeliveryChannels = `SELECT project_id, id, kind, is_default, notify_late, group_seconds FROM channels
		WHERE project_id = ANY($1::text[]) ORDER BY id`
	qDeliveryPending = `SELECT incident_id, channel_id FROM deliveries
		WHERE incident_id = ANY($1::text[]) AND state = 'pending'`
	// qDeliveryInsert inserts routed deliveries, in order, to the channels
	// that still exist, and returns the key of each with its ID: the rest
	// of the row is what was routed.
	qDeliveryInsert = `INSERT INTO deliveries (project_id, incident_id, event_id, event, monitor_id, channel_id,
			state, attempts, created_at, next_attempt_at, report_id, group_at)
		SELECT u.project_id, nullif(u.incident_id, ''), nullif(u.event_id, 0), u.event, nullif(u.monitor_id, ''), u.channel_id,
			'pending', 0, u.at, u.at, nullif(u.report_id, ''), u.group_at
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[],
				$9::timestamptz[])
			WITH ORDINALITY AS u(project_id, incident_id, event_id, event, monitor_id, channel_id, at, report_id, group_at, n)
		JOIN channels c ON c.id = u.channel_id AND c.project_id = u.project_id
		ORDER BY u.n
		RETURNING ` + deliveryInserted
	// deliveryInserted is what an insert of deliveries returns of each: its
	// ID and its key (plan.Inserted).
	deliveryInserted = `id, coalesce(event_id, 0), coalesce(report_id, ''), channel_id`
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
		LEFT JOIN LATERAL (SELECT p.id, p.next_attempt_at FROM deliveries p
			WHERE p.incident_id = d.incident_id AND p.channel_id = d.channel_id AND p.event_id < d.event_id
				AND p.state = 'pending'
			ORDER BY p.event_id LIMIT 1) w ON true
		LEFT JOIN LATERAL (SELECT p.id, p.next_attempt_at FROM deliveries p
			WHERE d.group_at IS NOT NULL AND p.channel_id = d.channel_id AND p.group_at = d.group_at
				AND p.state = 'pending' AND p.id < d.id
			ORDER BY p.id LIMIT 1) g ON true
		WHERE d.project_id = $1 AND d.id = $2`
	qDeliveryGroup = `SELECT d.id, d.project_id, coalesce(d.incident_id, ''), d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, '', d.group_at, e.at, e.summary,
			0, NULL::timestamptz
		FROM deliveries d JOIN incident_events e ON e.id = d.event_id
		WHERE d.project_id = $1 AND d.channel_id = $2 AND d.group_at = $3 AND d.state = 'pending'
		ORDER BY d.id LIMIT $4`
	qDeliveryGroupsOpen = `SELECT channel_id, max(group_at) FROM deliveries
		WHERE channel_id = ANY($1::text[]) AND state = 'pending' AND group_at IS NOT NULL
		GROUP BY channel_id`
	// qGroupLock takes a transaction-level advisory lock per channel.
	qGroupLock      = `SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) WITH ORDINALITY AS u(k, n) ORDER BY n`
	qDeliveryLock   = `SELECT ` + deliveryCols + ` FROM deliveries WHERE project_id = $1 AND id = $2 FOR UPDATE`
	qDeliveryUpdate = `UPDATE deliveries SET state = $2, attempts = $3, next_attempt_at = $4, finished_at = $5
		WHERE id = $1`
	attemptCols = `id, delivery_id, project_id, incident_id, channel_id, event, attempt, started_at,
		finished_at, outcome, status_code, error, next_attempt_at`
	qAttemptInsert = `INSERT INTO delivery_attempts (delivery_id, project_id, incident_id, channel_id, event,
			attempt, started_at, finished_at, outcome, status_code, error, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		RETURNING ` + attemptCols
	qDeliveryList = `SELECT d.id, d.project_id, coalesce(d.incident_id, ''), d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, '', d.group_at, e.at, e.summary, 0, NULL::timestamptz
		FROM deliveries d JOIN incident_events e ON e.id = d.event_id
		WHERE d.project_id = $1 AND d.incident_id = ANY($2::text[])
		ORDER BY d.incident_id, d.event_id, d.channel_id`
	qAttemptList = `SELECT ` + attemptCols + ` FROM delivery_attempts
		WHERE project_id = $1 AND incident_id = ANY($2::text[]) ORDER BY delivery_id, attempt`
	// qIncidentRemind stamps the open incidents due for a reminder and
	// records a reminder event for each. The stamp is a condition of the
	// UPDATE, which PostgreSQL checks again on a row another transaction
	// changed meanwhile: replicas that remind at once remind each incident
	// once.
	qIncidentRemind = `WITH due AS (
			UPDATE incidents SET reminded_at = $1
			WHERE id IN (SELECT id FROM incidents
				WHERE resolved_at IS NULL AND NOT held AND coalesce(reminded_at, opened_at) <= $2
					AND NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = incidents.monitor_id AND m.snoozed_until > $1)
				ORDER BY opened_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
			AND resolved_at IS NULL AND NOT held AND coalesce(reminded_at, opened_at) <= $2
			RETURNING id, project_id, monitor_id, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.reminder', $1, summary FROM due ORDER BY id` + eventReturning

	// qHeartbeatLock locks the one heartbeat row: evaluators on every
	// replica take turns, so a gap is seen, and recorded, by one of them.
	qHeartbeatLock  = `SELECT last_pass_at FROM evaluator_heartbeat WHERE id = 1 FOR UPDATE`
	qHeartbeatStamp = `UPDATE evaluator_heartbeat SET last_pass_at = $1 WHERE id = 1`

	outageCols       = `id, started_at, ended_at, monitors_postponed, settled_at`
	qOutageUnsettled = `SELECT ` + outageCols + ` FROM outages WHERE settled_at IS NULL ORDER BY id LIMIT 1`
	qOutageInsert    = `INSERT INTO outages (started_at, ended_at) VALUES ($1, $2) RETURNING ` + outageCols
	qOutageExtend    = `UPDATE outages SET ended_at = $2 WHERE id = $1 RETURNING ` + outageCols
	// qOutageSettle settles an outage once no unpaused monitor is due at or
	// before its end (monitor_deadlines_due_idx answers). A monitor another
	// evaluator is still evaluating keeps its old deadline until that
	// evaluator commits, so it keeps the outage open.
	qOutageSettle = `UPDATE outages SET settled_at = $2 WHERE id = $1 AND NOT EXISTS (
			SELECT 1 FROM monitor_deadlines WHERE due_at <= outages.ended_at)
		RETURNING ` + outageCols
	// qOutagePostponed counts monitors an outage postponed, in the claim's
	// transaction. An outage is named by its start, which extending it
	// does not change.
	qOutagePostponed = `UPDATE outages SET monitors_postponed = monitors_postponed + $2 WHERE started_at = $1`
	// qIncidentOpenMany opens the incidents of a claim, with their opened
	// events, as qIncidentOpen does one by one. They are opened by time,
	// so no ping caused them (ping_id 0). An event can only go to an
	// incident the statement has just inserted, so it needs no ON
	// CONFLICT of its own (which would make each insert speculative).
	qIncidentOpenMany = `WITH ins AS (
			INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[])
			ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING
			RETURNING id, project_id, monitor_id, opened_at, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.opened', opened_at, summary FROM ins`
	// qIncidentOpenHeldMany opens held incidents of a claim, with their
	// opened events, as qIncidentOpen does a held one: the events are
	// recorded, not returned (they are delivered when the hold ends).
	qIncidentOpenHeldMany = `WITH ins AS (
			INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq, held, suppressed_by)
			SELECT u.id, u.project_id, u.monitor_id, u.kind, u.opened_at, u.summary, u.run_seq, true, nullif(u.suppressed_by, '')
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[], $8::text[])
				AS u(id, project_id, monitor_id, kind, opened_at, summary, run_seq, suppressed_by)
			ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING
			RETURNING id, project_id, monitor_id, opened_at, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.opened', opened_at, summary FROM ins`
	// qClaimPlan leaves the claim of due monitors one plan, the ordered
	// walk of monitor_deadlines_due_idx joined to each monitor by its
	// primary key, and no JIT compilation; qClaimPlanEnd puts the settings
	// back for the rest of the transaction (SET LOCAL ... TO DEFAULT, one
	// statement each: reading them back from pg_settings cost about a
	// millisecond a claim). See MonitorClaimDue.
	qClaimPlan = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
		set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
		set_config('enable_mergejoin', 'off', true), set_config('enable_material', 'off', true),
		set_config('enable_memoize', 'off', true), set_config('jit', 'off', true)`
	qOutageList = `SELECT ` + outageCols + ` FROM outages WHERE ($1::bigint = 0 OR id < $1::bigint)
		ORDER BY id DESC LIMIT $2`

	channelCols    = `id, project_id, kind, name, config, is_default, created_at, updated_at, notify_late, group_seconds, report`
	qChannelCreate = `INSERT INTO channels (` + channelCols + `) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11)`
	qChannelGet    = `SELECT ` + channelCols + ` FROM channels WHERE project_id = $1 AND id = $2`
	qChannelList   = `SELECT ` + channelCols + ` FROM channels WHERE project_id = $1 ORDER BY name, id
		LIMIT $2 OFFSET $3`
	qChannelGetForUpdate = qChannelGet + ` FOR UPDATE`
	qChannelUpdate       = `UPDATE channels SET name = $3, config = $4::jsonb, is_default = $5, updated_at = $6,
			notify_late = $7, group_seconds = $8, report = $9
		WHERE project_id = $1 AND id = $2`
	// qChannelUsers lists the monitors that name a channel; the channel row
	// is locked first, so a delete and a check see the same monitors.
	qChannelUsers  = `SELECT slug FROM monitors WHERE project_id = $1 AND channels @> ARRAY[$2::text] ORDER BY slug`
	qChannelDelete = `DELETE FROM channels WHERE project_id = $1 AND id = $2`
	qLateChannels  = `SELECT project_id, id, is_default FROM channels WHERE project_id = ANY($1::text[]) AND notify_late`

	qMonitorPersonFieldsGet = `SELECT person_fields FROM monitors WHERE project_id = $1 AND id = $2`
	qMonitorPersonFieldsSet = `UPDATE monitors SET person_fields = $3 WHERE project_id = $1 AND id = $2`
	qMonitorPersonFields    = `SELECT id, person_fields FROM monitors
		WHERE project_id = $1 AND id = ANY($2::text[]) AND cardinality(person_fields) > 0`
	// qSourceLock serializes the declarations of one source in one
	// project, across replicas, until the transaction ends.
	qSourceLock = `SELECT pg_advisory_xact_lock($1)`
	// qMonitorSyncLock loads and locks the monitors a declaration may
	// touch, in ID order like every other multi-row lock of the store.
	qMonitorSyncLock = `SELECT ` + monitorCols + `, person_fields FROM monitors
		WHERE project_id = $1 AND (source = $2 OR slug = ANY($3::text[])) ORDER BY id FOR UPDATE`

	qIncidentCountByKind = `SELECT kind, count(*), count(*) FILTER (WHERE resolved_at IS NULL) FROM incidents
		GROUP BY kind ORDER BY kind`

	qProjectBadgeKey = `SELECT coalesce(badge_key, '') FROM projects WHERE id = $1`
	// qProjectBadgeKeySet keeps a key another replica set first.
	qProjectBadgeKeySet = `UPDATE projects SET badge_key = coalesce(badge_key, $2) WHERE id = $1 RETURNING badge_key`

	userCols          = `id, email, password_hash, created_at, disabled_at`
	qUserInsert       = `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)`
	qUserCount        = `SELECT count(*) FROM users`
	qUserGet          = `SELECT ` + userCols + ` FROM users WHERE id = $1`
	qUserGetByEmail   = `SELECT ` + userCols + ` FROM users WHERE email = $1`
	qUserLockFirst    = `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`
	qUserExists       = `SELECT EXISTS (SELECT 1 FROM users)`
	qProjectMemberAdd = `INSERT INTO project_members (project_id, user_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (project_id, user_id) DO NOTHING`
	qProjectListByUser = `SELECT p.id, p.name, p.ping_key, p.created_at FROM projects p
		JOIN project_members pm ON pm.project_id = p.id WHERE pm.user_id = $1 ORDER BY p.created_at, p.id`
	qProjectRename = `UPDATE projects SET name = $2 WHERE id = $1 RETURNING id, name, ping_key, created_at`

	sessionCols    = `id, user_id, token_hash, csrf_token, created_at, expires_at`
	qSessionInsert = `INSERT INTO sessions (id, user_id, token_hash, csrf_token, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`
	qSessionGet           = `SELECT ` + sessionCols + ` FROM sessions WHERE token_hash = $1 AND expires_at > $2`
	qSessionExtend        = `UPDATE sessions SET expires_at = $2 WHERE id = $1`
	qSessionDelete        = `DELETE FROM sessions WHERE token_hash = $1`
	qSessionDeleteExpired = `DELETE FROM sessions WHERE expires_at <= $1`

	// qRunListRecent takes the newest runs of each monitor through the
	// runs primary key, one index range per monitor.
	qRunListRecent = `SELECT r.monitor_id, r.seq, r.rid, r.started_at, r.finished_at, r.outcome, r.duration_ms,
			r.attempt, r.exit_code, r.will_retry, r.stuck
		FROM monitors m CROSS JOIN LATERAL (
			SELECT * FROM runs WHERE runs.monitor_id = m.id ORDER BY seq DESC LIMIT $3) r
		WHERE m.project_id = $1 AND m.id = ANY($2::text[])
		ORDER BY r.monitor_id, r.seq DESC`
	// qRunBriefList reads the same runs as qRunListRecent, only their
	// outcome and duration, as one text per monitor. The IDs are joined,
	// not matched with ANY, which would compare each monitor of the
	// project with every ID.
	qRunBriefList = `SELECT m.id, b.runs
		FROM unnest($2::text[]) AS ids (id) JOIN monitors m ON m.id = ids.id
		CROSS JOIN LATERAL (
			SELECT string_agg(r.outcome || ':' || coalesce(r.duration_ms::text, ''), ',' ORDER BY r.seq DESC) AS runs
			FROM (SELECT seq, outcome, duration_ms FROM runs WHERE runs.monitor_id = m.id ORDER BY seq DESC LIMIT $3) r) b
		WHERE m.project_id = $1 AND b.runs IS NOT NULL`
)

// queries are the statements the planning layer runs itself.
var queries = plan.Queries{
	ProjectCreate: qProjectCreate, ProjectGet: qProjectGet, ProjectGetByPingKey: qProjectGetByPingKey,
	ProjectList: qProjectList, ProjectListByUser: qProjectListByUser, ProjectRename: qProjectRename,
	ProjectMemberAdd: qProjectMemberAdd, ProjectBadgeKey: qProjectBadgeKey, ProjectBadgeKeySet: qProjectBadgeKeySet,

	APIKeyCreate: qAPIKeyCreate, APIKeyGetByHash: qAPIKeyGetByHash, APIKeyList: qAPIKeyList, APIKeyRevoke: qAPIKeyRevoke,

	MonitorInsert: qMonitorInsert, MonitorUpdate: qMonitorUpdate, MonitorGet: qMonitorGet,
	MonitorLock: qMonitorGet + ` FOR UPDATE`, MonitorGetBySlug: qMonitorGetBySlug, MonitorGetByPingKey: qMonitorGetByPingKey,
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
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
		ReportGet: `SELECT body FROM reports WHERE project_id = $1 AND id = $2`,
	},
	ChannelCreate: qChannelCreate, ChannelGet: qChannelGet, ChannelLock: qChannelGetForUpdate, ChannelList: qChannelList,
	ChannelUpdate: qChannelUpdate, ChannelUsers: qChannelUsers, ChannelDelete: qChannelDelete,
	LateChannels: qLateChannels,

	DeliveryGet: qDeliveryGet, DeliveryList: qDeliveryList, DeliveryGroup: qDeliveryGroup, DeliveryGroupsOpen: qDeliveryGroupsOpen, DeliveryLock: qDeliveryLock, DeliveryUpdate: qDeliveryUpdate,
	AttemptInsert: qAttemptInsert, AttemptList: qAttemptList,

	UserLock: qUserLockFirst, UserExists: qUserExists, UserInsert: qUserInsert, UserCount: qUserCount,
	UserGet: qUserGet, UserGetByEmail: qUserGetByEmail,

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
// monitors. A dependent another transaction holds is skipped by the
// wake-up (waiting could deadlock with a batch that locks both): its held
// incident is looked at again by itself, monitors.SuppressRecheck later.
var dependencyQueries = plan.DependencyQueries{
	ParentIncidents: `SELECT monitor_id, id, kind FROM incidents
		WHERE monitor_id = ANY($1::text[]) AND resolved_at IS NULL ORDER BY opened_at, id`,
	DependencyGraph: `SELECT id, slug, depends_on FROM monitors WHERE project_id = $1`,
	DependentsWake: `UPDATE monitors SET next_deadline = $3 WHERE id IN (
		SELECT id FROM monitors WHERE project_id = $1 AND depends_on IS NOT NULL AND depends_on @> ARRAY[$2::text] AND NOT paused
			AND (next_deadline IS NULL OR next_deadline > $3)
			AND EXISTS (SELECT 1 FROM incidents i WHERE i.monitor_id = monitors.id AND i.resolved_at IS NULL AND i.held)
		ORDER BY id FOR UPDATE SKIP LOCKED)`,
}

// maintenanceQueries are the statements of maintenance windows, each kept
// whole as a JSON document.
var maintenanceQueries = plan.MaintenanceQueries{
	MaintenanceInsert: `INSERT INTO maintenance_windows (id, project_id, doc) VALUES ($1, $2, $3)`,
	MaintenanceGet:    `SELECT doc FROM maintenance_windows WHERE project_id = $1 AND id = $2`,
	MaintenanceLock:   `SELECT doc FROM maintenance_windows WHERE project_id = $1 AND id = $2 FOR UPDATE`,
	MaintenanceList:   `SELECT doc FROM maintenance_windows WHERE project_id = $1 ORDER BY id`,
	MaintenanceUpdate: `UPDATE maintenance_windows SET doc = $3 WHERE project_id = $1 AND id = $2`,
	MaintenanceDelete: `DELETE FROM maintenance_windows WHERE project_id = $1 AND id = $2`,
}

// statusPageQueries are the statements of status pages and incident notes,
// each kept whole as a JSON document.
var statusPageQueries = plan.StatusPageQueries{
	StatusPageInsert:    `INSERT INTO status_pages (id, project_id, slug, doc) VALUES ($1, $2, $3, $4)`,
	StatusPageGet:       `SELECT doc FROM status_pages WHERE project_id = $1 AND id = $2`,
	StatusPageLock:      `SELECT doc FROM status_pages WHERE project_id = $1 AND id = $2 FOR UPDATE`,
	StatusPageGetBySlug: `SELECT doc FROM status_pages WHERE slug = $1`,
	StatusPageList:      `SELECT doc FROM status_pages WHERE project_id = $1 ORDER BY slug`,
	StatusPageUpdate:    `UPDATE status_pages SET slug = $3, doc = $4 WHERE project_id = $1 AND id = $2`,
	StatusPageDelete:    `DELETE FROM status_pages WHERE project_id = $1 AND id = $2`,
	NoteInsert:          `INSERT INTO incident_notes (id, project_id, incident_id, doc) VALUES ($1, $2, $3, $4)`,
	NoteCount:           `SELECT count(*) FROM incident_notes WHERE incident_id = $1`,
	NoteList:            `SELECT doc FROM incident_notes WHERE project_id = $1 AND incident_id = ANY($2::text[])`,
	NoteDelete:          `DELETE FROM incident_notes WHERE project_id = $1 AND id = $2`,
}

// qClaimPlanEnd are the statements that put qClaimPlan's settings back.
var qClaimPlanEnd = []string{
	`SET LOCAL enable_bitmapscan TO DEFAULT`, `SET LOCAL enable_sort TO DEFAULT`, `SET LOCAL enable_seqscan TO DEFAULT`,
	`SET LOCAL enable_hashjoin TO DEFAULT`, `SET LOCAL enable_mergejoin TO DEFAULT`, `SET LOCAL enable_material TO DEFAULT`,
	`SET LOCAL enable_memoize TO DEFAULT`, `SET LOCAL jit TO DEFAULT`,
}
