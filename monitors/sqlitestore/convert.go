package sqlitestore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

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
	if errors.Is(err, sql.ErrNoRows) {
		return monitors.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w (%s)", monitors.ErrConflict, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w (%s)", monitors.ErrNotFound, se.Error())
		}
	}
	return err
}

// Times are stored as INTEGER microseconds since the Unix epoch, in UTC,
// the precision of PostgreSQL's timestamptz.

func micros(t time.Time) int64 { return t.UnixMicro() }

// microsOrNil returns NULL for the zero time.
func microsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// ceilMicros rounds t up to the microsecond, so that a stored deadline is
// never earlier than the real one: a monitor is not claimed before it is
// due.
func ceilMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	us := t.UnixMicro()
	if t.Sub(time.UnixMicro(us)) > 0 {
		us++
	}
	return us
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func fromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func nullInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func intFromNull(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

func int64FromNull(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// cleanText replaces NUL bytes and invalid UTF-8, which PostgreSQL refuses,
// so that both stores return the same text for the same ping.
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// encodeState returns the JSON of s with every instant in UTC.
func encodeState(s monitors.State) (string, error) {
	s = s.UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode state: %w", err)
	}
	return string(b), nil
}

func decodeState(b string, s *monitors.State) error {
	if err := json.Unmarshal([]byte(b), s); err != nil {
		return fmt.Errorf("decode state: %w", err)
	}
	return nil
}

func encodeStrings(s []string) (string, error) {
	if s == nil {
		s = []string{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode list: %w", err)
	}
	return string(b), nil
}

func decodeStrings(b string) ([]string, error) {
	out := []string{}
	if err := json.Unmarshal([]byte(b), &out); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	return out, nil
}

func encodeRetryPolicy(p *monitors.RetryPolicy) (any, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode retry policy: %w", err)
	}
	return string(b), nil
}

func decodeRetryPolicy(n sql.NullString) (*monitors.RetryPolicy, error) {
	if !n.Valid {
		return nil, nil
	}
	var p monitors.RetryPolicy
	if err := json.Unmarshal([]byte(n.String), &p); err != nil {
		return nil, fmt.Errorf("decode retry policy: %w", err)
	}
	return &p, nil
}
