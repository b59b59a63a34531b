package pgstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigilhq/vigil/monitors"
)

// interpret translates database errors at the boundary: no rows is
// monitors.ErrNotFound, a unique violation monitors.ErrConflict, and a
// foreign key violation (a row that refers to a missing one)
// monitors.ErrNotFound.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return monitors.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w (%s)", monitors.ErrConflict, pgErr.ConstraintName)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w (%s)", monitors.ErrNotFound, pgErr.ConstraintName)
		}
	}
	return err
}

// utc returns t in UTC; the database keeps instants, and the store returns
// them in UTC.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// timeOrNil returns nil for the zero time, to store NULL.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// ceilMicro rounds t up to the microsecond, the database's precision, so
// that a stored deadline is never earlier than the real one: a monitor is
// not claimed before it is due.
func ceilMicro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	if r := u.Truncate(time.Microsecond); !r.Equal(u) {
		u = r.Add(time.Microsecond)
	}
	return &u
}

// cleanText makes s storable as PostgreSQL text, which refuses NUL bytes and
// invalid UTF-8: one odd ping body must not fail a whole batch. Both stores
// clean alike, so they return the same text.
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// encodeState returns the JSON of s with every instant in UTC.
func encodeState(s monitors.State) ([]byte, error) {
	s = s.UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return b, nil
}

func decodeState(b []byte, s *monitors.State) error {
	if err := json.Unmarshal(b, s); err != nil {
		return fmt.Errorf("decode state: %w", err)
	}
	return nil
}

func encodeRetryPolicy(p *monitors.RetryPolicy) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode retry policy: %w", err)
	}
	return b, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
