package evaluator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// ReportIntervalDefault is how often an evaluator looks for reports due:
// a report is claimed at most this long after its period ends.
const ReportIntervalDefault = time.Minute

// ReportStore is what the evaluator needs of [monitors.Store] to make
// reports. Store implementations that have them (both stores do) get
// reports; see [Evaluator.ReportOnce].
type ReportStore interface {
	monitors.ReportStore
	ReportChannels(ctx context.Context) ([]monitors.ReportChannel, error)
	ReportClaim(ctx context.Context, p *monitors.ReportClaimParams) (*monitors.Delivery, error)
}

// Reports tells what one look for reports did.
type Reports struct {
	// Claimed are the reports this evaluator claimed, each with its
	// delivery; Taken counts those another evaluator claimed first.
	Claimed []*monitors.Delivery
	Taken   int
}

// ReportOnce claims the reports due at the clock's now (see
// [monitors.ReportsDue]): for each, it makes the report of its project
// and period and claims it with its delivery in one transaction. Every
// replica may do so at once: the claim's unique key lets one win, and the
// others' claims are ErrConflict, counted in Taken. A report due while
// Vigil was down is claimed by the first look after it is back. A store
// without reports claims none.
func (e *Evaluator) ReportOnce(ctx context.Context) (*Reports, error) {
	out := &Reports{}
	rs, ok := e.store.(ReportStore)
	if !ok {
		return out, nil
	}
	now := e.cfg.NowFunc()
	chs, err := rs.ReportChannels(ctx)
	if err != nil {
		return out, fmt.Errorf("reports: %w", err)
	}
	// One project's report of one period is the same for all its
	// channels: make it once.
	type key struct {
		project string
		period  monitors.ReportPeriod
		start   time.Time
	}
	made := map[key]*monitors.Report{}
	var errs []error
	for _, due := range monitors.ReportsDue(chs, now) {
		c := due.Channel
		log := e.log.With("channel_id", c.ID, "project_id", c.ProjectID, "report", string(c.Report),
			"period_start", due.Start, "period_end", due.End)
		k := key{c.ProjectID, c.Report, due.Start}
		r := made[k]
		if r == nil {
			r, err = monitors.LoadReport(ctx, rs, c.ProjectID, c.Report, due.Start, due.End, now)
			if err != nil {
				errs = append(errs, fmt.Errorf("report for channel %s: %w", c.ID, err))
				continue
			}
			made[k] = r
		}
		claim := *r
		claim.ID, claim.ChannelID = monitors.ReportID(c.ID, c.Report, due.Start), c.ID
		d, err := rs.ReportClaim(ctx, &monitors.ReportClaimParams{Report: &claim, Now: now})
		switch {
		case errors.Is(err, monitors.ErrConflict):
			out.Taken++
			continue
		case errors.Is(err, monitors.ErrNotFound):
			continue // the channel was deleted meanwhile
		case err != nil:
			errs = append(errs, fmt.Errorf("claim report for channel %s: %w", c.ID, err))
			continue
		}
		out.Claimed = append(out.Claimed, d)
		e.metrics.reports.WithLabelValues(string(c.Report)).Inc()
		if due.Skipped > 0 {
			log.Warn("reports of earlier periods were never sent (Vigil was down through them); only the last complete period is reported",
				"periods_skipped", due.Skipped)
		}
		log.Info("report claimed", "report_id", claim.ID, "delivery_id", d.ID)
	}
	return out, errors.Join(errs...)
}

// reportLoop runs ReportOnce every ReportInterval until ctx is done.
func (e *Evaluator) reportLoop(ctx context.Context) {
	t := time.NewTicker(e.cfg.ReportInterval)
	defer t.Stop()
	for {
		if _, err := e.ReportOnce(ctx); err != nil && ctx.Err() == nil {
			e.metrics.errors.Inc()
			e.log.ErrorContext(ctx, "reports failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
