package sqlitestore

import (
	"context"
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
