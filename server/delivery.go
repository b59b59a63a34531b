package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
)

// This file wires durable delivery of notifications into the server: the
// stores' enqueue hook and River's migrations (openPostgres, openSQLite,
// used by OpenStore), the River client that works the jobs
// (deliveryServices), and what delivery lends the API and the dashboard
// (test notifications and delivery attempts).

// openPostgres opens the PostgreSQL store with the enqueue hook of
// delivery, and applies River's migrations beside the store's. With pg
// (the server's), the pool is sized by it and commits are checked for
// durability before anything migrates.
func openPostgres(ctx context.Context, url string, logger *slog.Logger, pg *pgOptions, lim storeLimits) (*pgstore.Store, deliveryQueue, error) {
	enq, err := delivery.NewPostgresEnqueuer()
	if err != nil {
		return nil, nil, err
	}
	opts := pgstore.Options{Logger: logger, EnqueueDeliveries: enq.Enqueue, MaxMonitorsPerProject: lim.maxMonitors, Sealer: lim.sealer}
	if pg != nil {
		opts.MaxConns = pg.maxConns
		opts.CheckPool = func(ctx context.Context, pool *pgxpool.Pool) error {
			return checkDurability(ctx, pool, pg.allowAsyncCommit, pg.logger)
		}
	}
	s, err := pgstore.Open(ctx, url, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := delivery.MigratePostgres(ctx, s.Pool(), logger); err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return s, func(cfg delivery.Config) (*delivery.Service, error) { return delivery.NewPostgres(s.Pool(), cfg) }, nil
}

// deliveryQueue makes the delivery service on the queue of a store's
// database, as the store's opening returns it.
type deliveryQueue func(cfg delivery.Config) (*delivery.Service, error)

// openSQLite opens the SQLite store with the enqueue hook of delivery, and
// applies River's migrations beside the store's, on its writer.
func openSQLite(ctx context.Context, path string, logger *slog.Logger, lim storeLimits) (*sqlitestore.Store, deliveryQueue, error) {
	enq, err := delivery.NewSQLiteEnqueuer()
	if err != nil {
		return nil, nil, err
	}
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Logger: logger, EnqueueDeliveries: enq.Enqueue,
		MaxMonitorsPerProject: lim.maxMonitors, Sealer: lim.sealer})
	if err != nil {
		return nil, nil, err
	}
	if err := delivery.MigrateSQLite(ctx, s.DB(), logger); err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return s, func(cfg delivery.Config) (*delivery.Service, error) { return delivery.NewSQLite(s.DB(), cfg) }, nil
}

// deliveryConfig is the configuration of delivery from the server's.
func (s *Server) deliveryConfig() delivery.Config {
	cfg := s.cfg.Delivery
	cfg.Store, cfg.BaseURL, cfg.NowFunc = s.store, s.cfg.BaseURL, s.cfg.NowFunc
	if s.keys != nil {
		cfg.Signer = s.keys
	}
	// Delivery stops after HTTP, which takes up to half the shutdown
	// timeout; its attempts get most of the rest before they are
	// cancelled (and made available again).
	cfg.StopTimeout = s.cfg.shutdownTimeout() * 2 / 5
	cfg.Logger = s.logger.With("part", "delivery")
	if s.Registry != nil {
		cfg.Registerer = s.Registry
	}
	return cfg
}

// delivery returns the one delivery service of the server, made on the
// store's queue the first time: its Sender (and HTTP client) makes both
// the jobs' attempts and the test notifications.
func (s *Server) delivery() (*delivery.Service, error) {
	s.deliveryOnce.Do(func() { s.deliverySvc, s.deliveryErr = s.queue(s.deliveryConfig()) })
	return s.deliverySvc, s.deliveryErr
}

// deliveryServices runs the River client that sends notifications, and
// the reminder loop.
func (s *Server) deliveryServices() []func(context.Context) {
	svc, err := s.delivery()
	if err != nil {
		s.logger.Error("notifications are not sent: delivery did not start; they wait in the queue", "err", err)
		return nil
	}
	return []func(context.Context){svc.Run}
}

// apiChannelTester gives POST /api/v1/channels/{id}/test (and the
// dashboard's test button) delivery's sender.
func (s *Server) apiChannelTester() api.ChannelTester {
	svc, err := s.delivery()
	if err != nil {
		s.logger.Error("test notifications are not available", "err", err)
		return nil
	}
	return channelTester{svc.Sender()}
}

// channelTester is delivery's Sender as the API wants it.
type channelTester struct{ sender *delivery.Sender }

func (c channelTester) TestChannel(ctx context.Context, ch *monitors.Channel) error {
	err := c.sender.TestChannel(ctx, ch)
	if errors.Is(err, delivery.ErrKindUnavailable) {
		return fmt.Errorf("%w: no SMTP server is configured (VIGIL_SMTP_HOST), so e-mail cannot be sent", api.ErrTestUnavailable)
	}
	return err
}

// deliveryLister gives incidents in the API and the dashboard their
// delivery attempts, from the store.
func (s *Server) deliveryLister() monitors.DeliveryLister { return monitors.StoreDeliveries(s.store) }
