package plan

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// pageDB answers ListPage's statements by name: fail makes a statement
// fail, and block makes it wait for its context to end, which it
// reports on blocked.
type pageDB struct {
	fail, block string
	blocked     chan error
}

func (d *pageDB) Query(ctx context.Context, q string, _ ...any) (Rows, error) {
	switch q {
	case d.fail:
		return nil, errors.New("boom: " + q)
	case d.block:
		<-ctx.Done()
		d.blocked <- ctx.Err()
		return nil, ctx.Err()
	}
	return emptyRows{}, nil
}

func (d *pageDB) Exec(context.Context, string, ...any) (int64, error) { return 0, nil }

type emptyRows struct{}

func (emptyRows) Next() bool        { return false }
func (emptyRows) Scan(...any) error { return nil }
func (emptyRows) Err() error        { return nil }
func (emptyRows) Close()            {}

// TestListPageConcurrentErrors checks ListPage with Concurrent: an error
// of the counts or of the page is returned, and a failing page ends the
// counts still running (their context is cancelled) before ListPage
// returns, so that no statement outlives the call.
func TestListPageConcurrentErrors(t *testing.T) {
	t.Parallel()
	q := func() *PageSQL {
		return &PageSQL{Counts: "counts", Page: "page", Matched: "matched", Concurrent: true}
	}
	_, err := ListPage(t.Context(), &pageDB{fail: "counts"}, q())
	require.ErrorContains(t, err, "count monitors by status: boom: counts")
	_, err = ListPage(t.Context(), &pageDB{fail: "page"}, q())
	require.ErrorContains(t, err, "list monitors: boom: page")

	db := &pageDB{fail: "page", block: "counts", blocked: make(chan error, 1)}
	_, err = ListPage(t.Context(), db, q())
	require.ErrorContains(t, err, "list monitors: boom: page")
	select {
	case err := <-db.blocked:
		require.ErrorIs(t, err, context.Canceled)
	default:
		t.Fatal("ListPage returned before the counts ended")
	}
}
