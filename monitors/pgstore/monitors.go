package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

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
	q += " ORDER BY name, id LIMIT " + arg(plan.LimitArg(p.Limit)) + " OFFSET " + arg(max(p.Offset, 0))
	return plan.ListMonitors(ctx, s.Reader(), q, args...)
}

// ExplainEvaluateDue returns the plans of the two queries an evaluator pass
// runs on the monitors table, the claim of MonitorEvaluateDue at now and the
// look-up of MonitorNextDeadline, as EXPLAIN (ANALYZE, BUFFERS) reports
// them, each with the planner settings it runs with. They run in a
// transaction that is rolled back: no row stays locked.
// Operators and benchmarks use it to check that both read monitor_deadlines_due_idx,
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
	for _, q := range qClaimPlanEnd {
		if _, err := tx.Exec(ctx, q); err != nil {
			return "", "", fmt.Errorf("explain: %w", err)
		}
	}
	if next, err = explain(qMonitorNextDeadline); err != nil {
		return "", "", err
	}
	return claim, next, nil
}
