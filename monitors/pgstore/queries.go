package pgstore

// The store's SQL. sqlitestore has a query of the same name for each, so the
// two can be read side by side.

const (
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
		created_at, updated_at, state, next_deadline, schedule_dialect`

	qMonitorInsert = `INSERT INTO monitors (id, project_id, name, slug, tags, schedule_kind, schedule_expr,
		schedule_tz, every_seconds, grace_seconds, max_runtime_seconds, deadline_seconds, alert_on_failure,
		failure_threshold, recovery_threshold, overlap, channels, paused, source, discovered, retry_policy,
		ping_key, created_at, updated_at, status, state, last_ping_at, next_expected_at, next_deadline,
		schedule_dialect)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		$21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`
	// qMonitorUpdate writes a monitor's whole row but its ID and project
	// (MonitorModify). It takes qMonitorInsert's arguments.
	qMonitorUpdate = `UPDATE monitors SET name = $3, slug = $4, tags = $5, schedule_kind = $6,
		schedule_expr = $7, schedule_tz = $8, every_seconds = $9, grace_seconds = $10,
		max_runtime_seconds = $11, deadline_seconds = $12, alert_on_failure = $13, failure_threshold = $14,
		recovery_threshold = $15, overlap = $16, channels = $17, paused = $18, source = $19,
		discovered = $20, retry_policy = $21, ping_key = $22, created_at = $23, updated_at = $24, status = $25, state = $26,
		last_ping_at = $27, next_expected_at = $28, next_deadline = $29, schedule_dialect = $30
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
	// by ping key or by project ping key and slug, in one query. The IDs are
	// found first (index lookups, an InitPlan), then the rows are read
	// through the primary key in ID order and locked in that order, the
	// same in every transaction, so two batches that share monitors wait for
	// each other instead of deadlocking.
	qMonitorLockBatch = `SELECT ` + monitorCols + ` FROM monitors WHERE id = ANY(ARRAY(
			SELECT m.id FROM unnest($1::text[]) AS k(ping_key) JOIN monitors m ON m.ping_key = k.ping_key
			UNION ALL
			SELECT m.id FROM unnest($2::text[], $3::text[]) AS k(project_ping_key, slug)
				JOIN projects p ON p.ping_key = k.project_ping_key
				CROSS JOIN LATERAL (SELECT id FROM monitors WHERE project_id = p.id AND slug = k.slug) m))
		ORDER BY id FOR UPDATE`
	// qMonitorClaimDue claims due monitors. SKIP LOCKED lets evaluators on
	// several replicas share the work: a row another evaluator (or ingest)
	// holds is left to it, and is not evaluated twice for one deadline.
	qMonitorClaimDue = `SELECT ` + monitorCols + ` FROM monitors
		WHERE NOT paused AND next_deadline <= $1
		ORDER BY next_deadline LIMIT $2 FOR UPDATE SKIP LOCKED`
	// qMonitorPostpone moves the deadline of a monitor that cannot be evaluated.
	qMonitorPostpone     = `UPDATE monitors SET next_deadline = $2 WHERE id = $1`
	qMonitorNextDeadline = `SELECT min(next_deadline) FROM monitors WHERE NOT paused`

	pingCols = `id, monitor_id, kind, at, rid, attempt, retry_at, exit_code, duration_ms, body, body_truncated,
		remote_addr, user_agent`
	// qPingIDs reserves IDs for a batch's pings before they are written, so
	// that incidents can name the ping that opened them and the pings can go
	// in with one statement.
	qPingIDs    = `SELECT nextval('pings_id_seq') FROM generate_series(1, $1)`
	qPingInsert = `INSERT INTO pings (` + pingCols + `)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::integer[],
			$7::timestamptz[], $8::integer[], $9::bigint[], $10::text[], $11::boolean[], $12::text[], $13::text[])`
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
		run_seq, ping_id`
	// qIncidentOpen inserts an incident and its opened event. The partial
	// unique index allows one open incident per monitor and kind; a second
	// is a no-op, never an error that would fail a batch.
	qIncidentOpen = `WITH ins AS (
			INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq, ping_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING
			RETURNING id, project_id, monitor_id, opened_at, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.opened', opened_at, summary FROM ins
		ON CONFLICT DO NOTHING`
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
	qIncidentGet  = `SELECT ` + incidentCols + ` FROM incidents WHERE project_id = $1 AND id = $2`
	qIncidentList = `SELECT ` + incidentCols + ` FROM incidents
		WHERE project_id = $1 AND ($2 = '' OR monitor_id = $2) AND (NOT $3 OR resolved_at IS NULL)
			AND ($4::timestamptz IS NULL OR resolved_at IS NULL OR resolved_at >= $4)
		ORDER BY opened_at DESC, id DESC LIMIT $5 OFFSET $6`
	qIncidentExists = `SELECT EXISTS (SELECT 1 FROM incidents WHERE project_id = $1 AND id = $2)`

	qIncidentEventList = `SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events
		WHERE project_id = $1 AND ($2 = '' OR incident_id = $2) ORDER BY id LIMIT $3`
)
