package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// ReportQueries are the statements of reports (see report.go).
type ReportQueries struct {
	// ReportChannels lists the channels of every project whose report is
	// set, by ID: (id, project_id, report, the latest period_start of
	// their reports of that period or NULL).
	ReportChannels string
	// ReportInsert inserts ($1 id, $2 project_id, $3 channel_id,
	// $4 period, $5 period_start, $6 period_end, $7 created_at, $8 body);
	// a second report of the channel and period is a unique violation.
	ReportInsert string
	// ReportGet reads the body of report $2 of project $1.
	ReportGet string
}

// ReportChannels lists every channel with a report, by ID, with the start
// of the latest period of that kind reported to it.
func (s *Scripts) ReportChannels(ctx context.Context) ([]monitors.ReportChannel, error) {
	return wrap(All(ctx, s.r(), func(r Row) (monitors.ReportChannel, error) {
		var c monitors.ReportChannel
		err := r.Scan(&c.ID, &c.ProjectID, &c.Report, &c.LastStart)
		return c, err
	}, s.Q.ReportChannels))("list channels with reports")
}

// ReportClaim stores a report and its delivery in one transaction: the
// report's row, whose unique key (channel, period, start) is the claim,
// makes a second claim of it ErrConflict, so it is delivered once however
// many replicas make it; the delivery goes through DeliveryInsert and the
// enqueue hook like any other.
func (s *Scripts) ReportClaim(ctx context.Context, p *monitors.ReportClaimParams) (*monitors.Delivery, error) {
	r := p.Report
	if r == nil || r.ID == "" || r.ChannelID == "" || r.ProjectID == "" {
		return nil, errors.New("claim report: the report, its ID, channel and project are required")
	}
	if err := monitors.ValidateReportPeriod(r.Period); err != nil || r.Period == monitors.ReportNone {
		return nil, fmt.Errorf("claim report %s: period %q is not weekly or monthly", r.ID, r.Period)
	}
	now := NowOr(p.Now)
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("claim report %s: %w", r.ID, err)
	}
	var d *monitors.Delivery
	err = s.Driver.InTx(ctx, func(tx Tx) error {
		if _, err := One(ctx, tx, scanChannel, s.Q.ChannelLock, r.ProjectID, r.ChannelID); err != nil {
			return fmt.Errorf("claim report %s: %w", r.ID, err)
		}
		if _, err := tx.Exec(ctx, s.Q.ReportInsert, r.ID, r.ProjectID, r.ChannelID, string(r.Period),
			r.Start.UTC(), r.End.UTC(), now, string(body)); err != nil {
			return fmt.Errorf("claim report %s: %w", r.ID, err)
		}
		next := now
		ds, err := tx.DeliveryInsert(ctx, []*monitors.Delivery{{ProjectID: r.ProjectID, ChannelID: r.ChannelID,
			Event: r.Period.Event(), ReportID: r.ID, EventAt: now, State: monitors.DeliveryPending,
			CreatedAt: now, NextAttemptAt: &next}})
		if err != nil {
			return fmt.Errorf("claim report %s: %w", r.ID, err)
		}
		if len(ds) != 1 {
			return fmt.Errorf("claim report %s: channel %s: %w", r.ID, r.ChannelID, monitors.ErrNotFound)
		}
		d = ds[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ReportGet returns a report of the project, as it was claimed.
func (s *Scripts) ReportGet(ctx context.Context, projectID, id string) (*monitors.Report, error) {
	body, err := One(ctx, s.r(), scalar[[]byte], s.Q.ReportGet, projectID, id)
	if err != nil {
		return nil, fmt.Errorf("get report %s: %w", id, err)
	}
	var r monitors.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("get report %s: %w", id, err)
	}
	r.Start, r.End, r.CreatedAt = r.Start.UTC(), r.End.UTC(), r.CreatedAt.UTC()
	return &r, nil
}
