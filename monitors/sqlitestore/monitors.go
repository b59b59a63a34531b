package sqlitestore

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// MonitorList returns the project's monitors that pass p's filters, ordered
// by name then ID. A Limit of 0 or less returns them all. Tag filters
// match exactly, through json_each.
func (s *Store) MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error) {
	args := []any{p.ProjectID}
	arg := func(v any) string {
		args = append(args, v)
		return "?"
	}
	var q strings.Builder
	q.WriteString("SELECT " + monitorCols + " FROM monitors WHERE project_id = ?")
	if p.Tag != "" {
		q.WriteString(" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = " + arg(p.Tag) + ")")
	}
	if p.Source != "" {
		q.WriteString(" AND source = " + arg(p.Source))
	}
	if len(p.Statuses) > 0 {
		q.WriteString(" AND " + monitors.StatusSQL(p.Statuses, p.Now, arg, func(col string, l []string) string {
			return col + " IN (SELECT value FROM json_each(" + arg(jsonList(l)) + "))"
		}))
	}
	q.WriteString(" ORDER BY name, id LIMIT coalesce(" + arg(plan.LimitArg(p.Limit)) + ", -1) OFFSET " + arg(max(p.Offset, 0)))
	return plan.ListMonitors(ctx, s.Reader(), q.String(), args...)
}

// MonitorListPage computes a page of the monitor list in the database. A
// row's version is a hash of all its columns and its count of run
// prunings (vigil_row_version of rowVersionArgs): SQLite keeps no version
// of a row, but its content is one.
func (s *Store) MonitorListPage(ctx context.Context, p *monitors.MonitorPageParams) (*monitors.MonitorPage, error) {
	args := []any{p.ProjectID}
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	where := "project_id = ?1"
	if p.Status != "" {
		where += " AND " + monitors.StatusSQL([]monitors.Status{p.Status}, p.Now, arg, func(col string, l []string) string {
			return col + " IN (SELECT value FROM json_each(" + arg(jsonList(l)) + "))"
		})
	}
	if p.Tag != "" {
		where += " AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = " + arg(p.Tag) + ")"
	}
	if p.Query != "" {
		q := arg(strings.ToLower(p.Query))
		where += " AND (instr(vigil_lower(name), " + q + ") > 0 OR instr(slug, " + q + ") > 0" +
			" OR EXISTS (SELECT 1 FROM json_each(tags) WHERE instr(vigil_lower(value), " + q + ") > 0))"
	}
	filtered := slices.Clone(args)
	// Without a filter, the matches are the project's monitors, counted
	// once from its index: a window (count(*) OVER ()) keeps every row
	// before the sort instead of the page's (5,000 monitors: the sort
	// takes 7.2 ms with it, 2.8 without). With a filter, the window keeps
	// the rows that match, and a count would run the filter again.
	matched := "count(*) OVER ()"
	if len(filtered) == 1 {
		matched = "(SELECT count(*) FROM monitors WHERE project_id = ?1)"
	}
	// The page's IDs are found first, so that only its rows are read
	// whole and hashed (a sort carries every column it returns).
	from := " FROM (SELECT id, name, " + monitors.ListRankSQL(arg(p.Now)) + " AS rank, " + matched + " AS matched FROM monitors WHERE " + where +
		" ORDER BY rank, name, id LIMIT coalesce(" + arg(plan.LimitArg(p.Limit)) + ", -1) OFFSET " + arg(max(p.Offset, 0)) + ") AS p" +
		" JOIN monitors AS m ON m.id = p.id LEFT JOIN monitor_runs_pruned AS r ON r.monitor_id = m.id ORDER BY p.rank, p.name, p.id"
	return plan.ListPage(ctx, s.Reader(), &plan.PageSQL{
		Counts: qMonitorPageCounts, CountsArgs: []any{p.ProjectID, p.Now},
		Tags: qMonitorPageTags, TagsArgs: []any{p.ProjectID},
		Page: "SELECT " + plan.Qualify("m.", monitorCols) + ", vigil_row_version(" + rowVersionArgs + "), p.matched" + from, PageArgs: args,
		Index: "SELECT m.id, vigil_row_version(" + rowVersionArgs + "), p.matched" + from,
		Rows:  qMonitorListedRows, RowsArgs: []any{p.ProjectID}, Known: p.Known,
		Matched: "SELECT count(*) FROM monitors WHERE " + where, MatchedArgs: filtered,
	})
}

// MonitorListMarker reads the project's count of writes of its monitor
// rows and of their run prunings, which triggers keep in
// monitor_list_versions (migration 0028): any insert, update or delete of
// a monitor row of the project moves it, in the write's transaction, so
// it costs one row whatever the number of monitors.
func (s *Store) MonitorListMarker(ctx context.Context, projectID string) (string, error) {
	return plan.MonitorListMarker(ctx, s.Reader(), qMonitorListMarker, projectID)
}
