package sqlitestore

import "github.com/vigilhq/vigil/monitors/plan"

// lifecycleQueries are the statements of the lifecycle of accounts and
// keys, the monitor limit and incident pruning. The count of a project's
// monitors needs no lock beside the write transaction's: SQLite has one
// writer.
var lifecycleQueries = plan.LifecycleQueries{
	UserList:            `SELECT ` + userCols + ` FROM users ORDER BY email`,
	UserSetDisabled:     `UPDATE users SET disabled_at = ?2 WHERE id = ?1 RETURNING ` + userCols,
	UserDelete:          `DELETE FROM users WHERE id = ?`,
	UserSetPassword:     `UPDATE users SET password_hash = ?2 WHERE id = ?1`,
	SessionDeleteByUser: `DELETE FROM sessions WHERE user_id = ?1 AND id <> ?2`,

	MonitorRotatePingKey: `UPDATE monitors SET ping_key = ?3, updated_at = ?4 WHERE project_id = ?1 AND id = ?2
		RETURNING ` + monitorCols,
	ProjectRotatePingKey: `UPDATE projects SET ping_key = ?2 WHERE id = ?1 RETURNING id, name, ping_key, created_at`,
	APIKeyTouch: `UPDATE api_keys SET last_used_at = ?2
		WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2)`,

	MonitorCount: `SELECT count(*) FROM monitors WHERE project_id = ?`,

	IncidentPruneBatch: `DELETE FROM incidents WHERE id IN (
		SELECT i.id FROM incidents i
		WHERE i.resolved_at IS NOT NULL AND i.resolved_at < ?1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.incident_id = i.id AND d.state = 'pending')
		ORDER BY i.resolved_at LIMIT ?2)`,
	// PingPruneBefore looks only at the oldest ?2 pings by ID (the order
	// they arrived in), so that it costs one short range of the table
	// whether or not any ping is old enough.
	PingPruneBefore: `DELETE FROM pings WHERE id IN (
		SELECT id FROM (SELECT id, at FROM pings ORDER BY id LIMIT ?2) WHERE at < ?1)`,
}

// secretQueries are the statements of sealing channel configs.
var secretQueries = plan.SecretQueries{
	ChannelPage:      `SELECT ` + channelCols + ` FROM channels WHERE id > ?1 ORDER BY id LIMIT ?2`,
	ChannelConfigSet: `UPDATE channels SET config = ?3 WHERE project_id = ?1 AND id = ?2`,
}

// uptimeQueries are the reads of a monitor's history for its uptime.
var uptimeQueries = plan.UptimeQueries{
	RunsFinishedBetween: `SELECT ` + runCols + ` FROM runs
		WHERE monitor_id = ?1 AND finished_at >= ?2 AND finished_at < ?3 ORDER BY finished_at, seq`,
	IncidentsOverlapping: `SELECT ` + incidentCols + ` FROM incidents
		WHERE monitor_id = ?1 AND opened_at < ?3 AND (resolved_at IS NULL OR resolved_at >= ?2)
		ORDER BY opened_at, id`,
}
