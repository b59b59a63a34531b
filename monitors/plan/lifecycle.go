package plan

import (
	"context"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// The lifecycle of accounts and keys, the monitor limit and the pruning of
// old incidents, over each store's [LifecycleQueries].

// checkRoom returns a *monitors.LimitError when adding monitors to the
// project would pass s.MaxMonitorsPerProject. On PostgreSQL it holds the
// project's creation lock until tx ends, so two replicas cannot both take
// the last place.
func (s *Scripts) checkRoom(ctx context.Context, tx Tx, projectID string, adding int) error {
	if s.MaxMonitorsPerProject <= 0 || adding == 0 {
		return nil
	}
	if s.Q.MonitorRoomLock != "" {
		rows, err := tx.Query(ctx, s.Q.MonitorRoomLock, projectID)
		if err != nil {
			return fmt.Errorf("lock monitor creation: %w", err)
		}
		rows.Close()
	}
	n, err := One(ctx, tx, scalar[int64], s.Q.MonitorCount, projectID)
	if err != nil {
		return fmt.Errorf("count monitors: %w", err)
	}
	if int(n)+adding > s.MaxMonitorsPerProject {
		return &monitors.LimitError{ProjectID: projectID, Limit: s.MaxMonitorsPerProject}
	}
	return nil
}

// UserList returns every user, by email.
func (s *Scripts) UserList(ctx context.Context) ([]*monitors.User, error) {
	return wrap(All(ctx, s.r(), scanUser, s.Q.UserList))("list users")
}

// UserSetDisabled disables or enables a user; disabling ends their
// sessions in the same transaction.
func (s *Scripts) UserSetDisabled(ctx context.Context, p *monitors.UserSetDisabledParams) (*monitors.User, error) {
	var u *monitors.User
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		var at any
		if p.DisabledAt != nil {
			at = p.DisabledAt.UTC()
		}
		if u, err = One(ctx, tx, scanUser, s.Q.UserSetDisabled, p.ID, at); err != nil {
			return err
		}
		if p.DisabledAt != nil {
			if _, err := tx.Exec(ctx, s.Q.SessionDeleteByUser, p.ID, ""); err != nil {
				return fmt.Errorf("end sessions: %w", err)
			}
		}
		return nil
	})
	return wrap(u, err)("set user %s disabled", p.ID)
}

// UserDelete deletes a user; the foreign keys take their memberships and
// sessions.
func (s *Scripts) UserDelete(ctx context.Context, id string) error {
	return wrapErr(Exec1(ctx, s.w(), s.Q.UserDelete, id), "delete user %s", id)
}

// UserSetPassword changes a user's password hash and ends their sessions
// but p.KeepSessionID, in one transaction.
func (s *Scripts) UserSetPassword(ctx context.Context, p *monitors.UserSetPasswordParams) error {
	return wrapErr(s.Driver.InTx(ctx, func(tx Tx) error {
		if err := Exec1(ctx, tx, s.Q.UserSetPassword, p.ID, p.PasswordHash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.Q.SessionDeleteByUser, p.ID, p.KeepSessionID); err != nil {
			return fmt.Errorf("end sessions: %w", err)
		}
		return nil
	}), "set password of user %s", p.ID)
}

// SessionDeleteByUser ends a user's sessions but p.ExceptID.
func (s *Scripts) SessionDeleteByUser(ctx context.Context, p *monitors.SessionDeleteByUserParams) (int64, error) {
	return wrap(s.w().Exec(ctx, s.Q.SessionDeleteByUser, p.UserID, p.ExceptID))("end sessions of user %s", p.UserID)
}

// MonitorRotatePingKey gives a monitor a new ping key. The update waits for
// a ping holding the monitor's row; pings after the commit no longer find
// the old key.
func (s *Scripts) MonitorRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Monitor, error) {
	return wrap(One(ctx, s.w(), ScanMonitorRow, s.Q.MonitorRotatePingKey, p.ProjectID, p.ID, p.PingKey,
		NowOr(p.Now)))("rotate ping key of monitor %s", p.ID)
}

// ProjectRotatePingKey gives a project a new project ping key.
func (s *Scripts) ProjectRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Project, error) {
	return wrap(One(ctx, s.w(), scanProject, s.Q.ProjectRotatePingKey, p.ProjectID, p.PingKey))("rotate ping key of project %s", p.ProjectID)
}

// APIKeyTouch records a use of the key, unless a later one is recorded.
func (s *Scripts) APIKeyTouch(ctx context.Context, p *monitors.APIKeyTouchParams) error {
	_, err := s.w().Exec(ctx, s.Q.APIKeyTouch, p.ID, p.At.UTC())
	return wrapErr(err, "record use of API key %s", p.ID)
}

// IncidentPrune deletes old resolved incidents one batch at a time, each
// batch its own statement (and transaction), so that none holds locks for
// long. Open incidents are never pruned, nor those with a delivery pending;
// the foreign keys take the events, deliveries and attempts.
func (s *Scripts) IncidentPrune(ctx context.Context, p *monitors.IncidentPruneParams) (int64, error) {
	batch := p.BatchSize
	if batch <= 0 {
		batch = monitors.IncidentPruneBatchDefault
	}
	var deleted int64
	for {
		n, err := s.w().Exec(ctx, s.Q.IncidentPruneBatch, p.ResolvedBefore.UTC(), batch)
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("prune incidents: %w", err)
		}
		if n < int64(batch) {
			return deleted, nil
		}
	}
}
