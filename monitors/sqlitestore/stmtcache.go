package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

const (
	// stmtCacheSize bounds the prepared statements kept per pool: every
	// fixed statement of the store, with room for the variants of the few
	// built ones (filters, batches).
	stmtCacheSize = 512
	// stmtCacheMaxLen is the longest statement kept: longer ones are built
	// for one batch (a VALUES list per row) and rarely repeat.
	stmtCacheMaxLen = 4096
	// pendingWait bounds how long the end of a write transaction waits
	// for the writer connection to prepare what the transaction ran
	// unprepared.
	pendingWait = 10 * time.Millisecond
)

// stmtCache keeps the statements run on one pool prepared, by their SQL:
// SQLite parses and plans a statement each time it is prepared, and that
// was a third of the CPU of a delivery attempt's reads. database/sql
// prepares a cached statement again on each connection it runs on, once.
type stmtCache struct {
	db    *sql.DB
	stmts *lru.Cache[string, *sql.Stmt]

	// pending are the statements run in a transaction that the cache did
	// not hold, to prepare once the transaction ends: preparing on the
	// pool during one would wait for the writer's one connection, which
	// the transaction holds. failed are those that could not be prepared,
	// not tried again.
	mu      sync.Mutex
	pending []string
	failed  map[string]bool
}

func newStmtCache(db *sql.DB) (*stmtCache, error) {
	// An evicted statement is closed; database/sql waits for the rows and
	// transactions still using it.
	c, err := lru.NewWithEvict[string, *sql.Stmt](stmtCacheSize, func(_ string, st *sql.Stmt) { _ = st.Close() })
	if err != nil {
		return nil, fmt.Errorf("statement cache: %w", err)
	}
	return &stmtCache{db: db, stmts: c}, nil
}

// get returns q prepared on the pool, or nil for a statement not kept.
func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if c == nil || len(q) > stmtCacheMaxLen {
		return nil, nil
	}
	if st, ok := c.stmts.Get(q); ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, ok, _ := c.stmts.PeekOrAdd(q, st); ok {
		// Another goroutine prepared it first.
		_ = st.Close()
		return prev, nil
	}
	return st, nil
}

// peek returns q prepared on the pool, or nil when the cache does not hold
// it yet; then q is prepared by the next call of preparePending.
func (c *stmtCache) peek(q string) *sql.Stmt {
	if c == nil || len(q) > stmtCacheMaxLen {
		return nil
	}
	if st, ok := c.stmts.Get(q); ok {
		return st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.failed[q] && !slices.Contains(c.pending, q) && len(c.pending) < stmtCacheSize {
		c.pending = append(c.pending, q)
	}
	return nil
}

// preparePending prepares the statements that peek did not find. It must
// not be called in a transaction of the pool's only connection. It waits
// for the connection at most pendingWait (another transaction may hold
// it), and leaves what it could not prepare by then for the next call.
func (c *stmtCache) preparePending(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, pendingWait)
	defer cancel()
	for i, q := range pending {
		if _, err := c.get(ctx, q); err != nil {
			c.mu.Lock()
			if ctx.Err() != nil {
				// Not prepared in time: left for the next transaction.
				for _, q := range pending[i:] {
					if !slices.Contains(c.pending, q) {
						c.pending = append(c.pending, q)
					}
				}
				c.mu.Unlock()
				return
			}
			if c.failed == nil {
				c.failed = make(map[string]bool)
			}
			c.failed[q] = true
			c.mu.Unlock()
		}
	}
}

// close closes every statement kept.
func (c *stmtCache) close() {
	if c != nil {
		c.stmts.Purge()
	}
}
