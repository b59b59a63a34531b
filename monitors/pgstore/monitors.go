package pgstore

import (
	"context"
	"fmt"
	"slices"
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

// MonitorListPage computes a page of the monitor list in the database. A
// row's version is its xmin (every committed write of a row, whatever
// wrote it, gives it a new one) and its count of run prunings. Without a
// filter, the number matched is the total, not counted again over the
// page's scan.
func (s *Store) MonitorListPage(ctx context.Context, p *monitors.MonitorPageParams) (*monitors.MonitorPage, error) {
	now := p.Now.UTC()
	args := []any{p.ProjectID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := "project_id = $1"
	if p.Status != "" {
		where += " AND " + monitors.StatusSQL([]monitors.Status{p.Status}, now, arg, func(col string, l []string) string {
			return col + " = ANY(" + arg(l) + "::text[])"
		})
	}
	if p.Tag != "" {
		where += " AND tags @> ARRAY[" + arg(p.Tag) + "::text]"
	}
	if p.Query != "" {
		q := arg(strings.ToLower(p.Query))
		where += " AND (strpos(lower(name), " + q + ") > 0 OR strpos(slug, " + q + ") > 0" +
			" OR EXISTS (SELECT 1 FROM unnest(tags) AS t (tag) WHERE strpos(lower(t.tag), " + q + ") > 0))"
	}
	filtered := slices.Clone(args)
	// The number that pass the filters, or NULL for all (plan.PageSQL).
	matched := "NULL::bigint"
	if len(args) > 1 {
		matched = "count(*) OVER ()"
	}
	// The page's IDs and versions are found first, so that only its rows
	// are read whole (a sort carries every column it returns).
	page := "(SELECT id, name, xmin, " + monitors.ListRankSQL(arg(now)) + " AS rank, " + matched + " AS matched FROM monitors WHERE " + where +
		" ORDER BY rank, name, id LIMIT " + arg(plan.LimitArg(p.Limit)) + " OFFSET " + arg(max(p.Offset, 0)) + ") AS p"
	const order = " ORDER BY p.rank, p.name, p.id"
	return plan.ListPage(ctx, s.Reader(), &plan.PageSQL{
		Counts: qMonitorPageCounts, CountsArgs: []any{p.ProjectID, now},
		Page: "SELECT " + plan.Qualify("m.", monitorCols) + ", " + rowVersion + ", p.matched FROM " + page +
			" JOIN monitors AS m ON m.id = p.id LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = m.id" + order,
		PageArgs: args,
		// The versions from the page's own columns.
		Index: "SELECT p.id, " + versionOf("p") + ", p.matched FROM " + page +
			" LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = p.id" + order,
		Rows: qMonitorListedRows, RowsArgs: []any{p.ProjectID}, Known: p.Known,
		Matched: "SELECT count(*) FROM monitors WHERE " + where, MatchedArgs: filtered,
		// The counts and the page each scan the project's rows: at once,
		// on two connections of the pool.
		Concurrent: true,
	})
}

// MonitorListMarker sums a hash of every monitor row's ID and version:
// any write of a row, a pruning of its runs, an insert or a delete
// changes it.
func (s *Store) MonitorListMarker(ctx context.Context, projectID string) (string, error) {
	return plan.MonitorListMarker(ctx, s.Reader(), qMonitorListMarker, projectID)
}
