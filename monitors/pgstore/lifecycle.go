package pgstore

import "github.com/vigilhq/vigil/monitors/plan"

// lifecycleQueries are the statements of the lifecycle of accounts and
// keys, the monitor limit and incident pruning.
var lifecycleQueries = plan.LifecycleQueries{
	UserList:            `SELECT ` + userCols + ` FROM users ORDER BY email`,
	UserSetDisabled:     `UPDATE users SET disabled_at = $2 WHERE id = $1 RETURNING ` + userCols,
	UserDelete:          `DELETE FROM users WHERE id = $1`,
	UserSetPassword:     `UPDATE users SET password_hash = $2 WHERE id = $1`,
	SessionDeleteByUser: `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`,

	MonitorRotatePingKey: `UPDATE monitors SET ping_key = $3, updated_at = $4 WHERE project_id = $1 AND id = $2
		RETURNING ` + monitorCols,
	ProjectRotatePingKey: `UPDATE projects SET ping_key = $2 WHERE id = $1 RETURNING id, name, ping_key, created_at`,
	APIKeyTouch: `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,

	MonitorRoomLock: `SELECT pg_advisory_xact_lock(hashtextextended('vigil.monitors:' || $1, 0))`,
	MonitorCount:    `SELECT count(*) FROM monitors WHERE project_id = $1`,

	IncidentPruneBatch: `DELETE FROM incidents WHERE id IN (
		SELECT i.id FROM incidents i
		WHERE i.resolved_at IS NOT NULL AND i.resolved_at < $1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.incident_id = i.id AND d.state = 'pending')
		ORDER BY i.resolved_at LIMIT $2)`,
}

// secretQueries are the statements of sealing channel configs.
var secretQueries = plan.SecretQueries{
	ChannelPage:      `SELECT ` + channelCols + ` FROM channels WHERE id > $1 ORDER BY id LIMIT $2`,
	ChannelConfigSet: `UPDATE channels SET config = $3::jsonb WHERE project_id = $1 AND id = $2`,
}

// uptimeQueries are the reads of a monitor's history for its uptime.
var uptimeQueries = plan.UptimeQueries{
	RunsFinishedBetween: `SELECT ` + runCols + ` FROM runs
		WHERE monitor_id = $1 AND finished_at >= $2 AND finished_at < $3 ORDER BY finished_at, seq`,
	IncidentsOverlapping: `SELECT ` + incidentCols + ` FROM incidents
		WHERE monitor_id = $1 AND opened_at < $3 AND (resolved_at IS NULL OR resolved_at >= $2)
		ORDER BY opened_at, id`,
}
