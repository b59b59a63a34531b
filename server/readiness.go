package server

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// This file holds what /readyz reports: whether this replica should be
// sent traffic, and if not, why. A load balancer or an orchestrator takes
// a replica out while it migrates the database at start, while its
// database does not answer, and once it is shutting down; /healthz only
// says that the process is alive, so a replica waiting for its database
// is not restarted for it.

// phase is where a replica is in its life.
type phase int32

const (
	phaseMigrating phase = iota // opening the store: migrations run
	phaseServing                // every route is served
	phaseStopping               // SIGTERM: draining in-flight work
)

// readyCheckTimeout bounds the database check of one /readyz request, so a
// database that hangs is reported instead of hanging the probe.
const readyCheckTimeout = 2 * time.Second

// readiness tells /readyz what to answer.
type readiness struct {
	phase atomic.Int32
	// ping checks the database once the store is open.
	ping atomic.Pointer[func(context.Context) error]
}

func (r *readiness) set(p phase) { r.phase.Store(int32(p)) }

// check reports whether the replica is ready, and if not, why, in words
// for an operator reading the probe's answer.
func (r *readiness) check(ctx context.Context) (bool, string) {
	switch phase(r.phase.Load()) {
	case phaseMigrating:
		return false, "not ready: applying database migrations"
	case phaseStopping:
		return false, "not ready: shutting down"
	}
	ping := r.ping.Load()
	if ping == nil {
		return false, "not ready: the database is not open"
	}
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	if err := (*ping)(ctx); err != nil {
		return false, "not ready: the database does not answer: " + err.Error()
	}
	return true, "OK"
}

// startingHandler answers while the store opens, before the routes exist:
// /healthz is OK, /readyz says that migrations run, and every other path
// is 503 with Retry-After, which a client (or a proxy) may retry.
func (s *Server) startingHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	switch r.URL.Path {
	case "/healthz":
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte("OK"))
		}
		return
	case "/readyz":
	default:
		w.Header().Set("Retry-After", "1")
	}
	_, why := s.ready.check(r.Context())
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(why))
	}
}
