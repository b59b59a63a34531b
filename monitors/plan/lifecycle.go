package plan

import (
	"context"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// The lifecycle of accounts, the monitor limit and the pruning of old
// incidents, over the Tx and Driver methods below.

// lifecycleTx are the statements of this file, part of [Tx].
type lifecycleTx interface {
	// MonitorCount counts the project's monitors and, when the count is
	// to be checked against a limit, serializes the creation of the
	// project's monitors until the transaction ends (PostgreSQL takes an
	// advisory lock; SQLite's write transaction holds its only lock).
	MonitorCount(ctx context.Context, projectID string) (int, error)
	// UserSetDisabled sets or clears a user's disabled_at.
	UserSetDisabled(ctx context.Context, p *monitors.UserSetDisabledParams) (*monitors.User, error)
	// UserSetPassword sets a user's password hash.
	UserSetPassword(ctx context.Context, id, hash string) error
	// SessionDeleteByUser deletes a user's sessions but exceptID.
	SessionDeleteByUser(ctx context.Context, userID, exceptID string) (int64, error)
}

// lifecycleDriver are the statements of this file that run outside a
// transaction, part of [Driver].
type lifecycleDriver interface {
	// IncidentPruneBatch deletes up to limit incidents resolved before
	// before, with no delivery pending, in its own short transaction (the
	// foreign keys take their events, deliveries and attempts), and
	// returns how many it deleted.
	IncidentPruneBatch(ctx context.Context, p *monitors.IncidentPruneParams, limit int) (int64, error)
}

// checkRoom returns a *monitors.LimitError when adding monitors to the
// project would pass s.MaxMonitorsPerProject.
func (s *Scripts) checkRoom(ctx context.Context, tx Tx, projectID string, adding int) error {
	if s.MaxMonitorsPerProject <= 0 || adding == 0 {
		return nil
	}
	n, err := tx.MonitorCount(ctx, projectID)
	if err != nil {
		return fmt.Errorf("count monitors: %w", err)
	}
	if n+adding > s.MaxMonitorsPerProject {
		return &monitors.LimitError{ProjectID: projectID, Limit: s.MaxMonitorsPerProject}
	}
	return nil
}

// MonitorInsert stores a new monitor, within the project's limit.
func (s *Scripts) MonitorInsert(ctx context.Context, m *monitors.Monitor) error {
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		if err := s.checkRoom(ctx, tx, m.ProjectID, 1); err != nil {
			return err
		}
		return tx.MonitorInsert(ctx, m)
	})
	if err != nil {
		return fmt.Errorf("insert monitor: %w", err)
	}
	return nil
}

// UserSetDisabled disables or enables a user; disabling ends their
// sessions in the same transaction.
func (s *Scripts) UserSetDisabled(ctx context.Context, p *monitors.UserSetDisabledParams) (*monitors.User, error) {
	var u *monitors.User
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		if u, err = tx.UserSetDisabled(ctx, p); err != nil {
			return err
		}
		if p.DisabledAt != nil {
			if _, err := tx.SessionDeleteByUser(ctx, p.ID, ""); err != nil {
				return fmt.Errorf("end sessions: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set user %s disabled: %w", p.ID, err)
	}
	return u, nil
}

// UserSetPassword changes a user's password hash and ends their sessions
// but p.KeepSessionID, in one transaction.
func (s *Scripts) UserSetPassword(ctx context.Context, p *monitors.UserSetPasswordParams) error {
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		if err := tx.UserSetPassword(ctx, p.ID, p.PasswordHash); err != nil {
			return err
		}
		if _, err := tx.SessionDeleteByUser(ctx, p.ID, p.KeepSessionID); err != nil {
			return fmt.Errorf("end sessions: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set password of user %s: %w", p.ID, err)
	}
	return nil
}

// IncidentPrune deletes old resolved incidents one batch at a time, each
// batch in its own transaction, so that no statement holds locks for long.
// Open incidents are never pruned, nor those with a delivery pending.
func (s *Scripts) IncidentPrune(ctx context.Context, p *monitors.IncidentPruneParams) (int64, error) {
	batch := p.BatchSize
	if batch <= 0 {
		batch = monitors.IncidentPruneBatchDefault
	}
	var deleted int64
	for {
		n, err := s.Driver.IncidentPruneBatch(ctx, p, batch)
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("prune incidents: %w", err)
		}
		if n < int64(batch) {
			return deleted, nil
		}
	}
}
