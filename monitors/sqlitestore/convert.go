package sqlitestore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// tm scans INTEGER microseconds, or NULL, into a time.
type tm struct{ t *time.Time }

func (d tm) Scan(src any) error {
	us, ok := src.(int64)
	if !ok {
		return fmt.Errorf("scan time: %T is not INTEGER microseconds", src)
	}
	*d.t = fromMicros(us)
	return nil
}

// tmp scans INTEGER microseconds or NULL into a *time.Time.
type tmp struct{ t **time.Time }

func (d tmp) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.t = nil
		return nil
	case int64: // what SQLite gives, without database/sql's conversion
		t := fromMicros(v)
		*d.t = &t
		return nil
	}
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.t = fromNullMicros(n)
	return nil
}

// int64p scans an INTEGER or NULL into a *int64.
type int64p struct{ p **int64 }

func (d int64p) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.p = nil
	if n.Valid {
		*d.p = &n.Int64
	}
	return nil
}

// intp scans an INTEGER or NULL into a *int.
type intp struct{ p **int }

func (d intp) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.p = nil
	if n.Valid {
		v := int(n.Int64)
		*d.p = &v
	}
	return nil
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

// plainList reads s, a JSON array of strings, when each of them is
// printable ASCII without escapes (as tags, channel IDs and monitor IDs
// are), the strings cut from s without a copy; ok is false for anything
// else, which encoding/json reads. Lists are in every monitor's row.
func plainList(s string) (list strList, ok bool) {
	i := skipSpace(s, 0)
	if i == len(s) || s[i] != '[' {
		return nil, false
	}
	n := 0
	for j := i; j < len(s); j++ {
		if s[j] == '"' {
			n++
		}
	}
	list = make(strList, 0, n/2)
	if i = skipSpace(s, i+1); i < len(s) && s[i] == ']' {
		return list, skipSpace(s, i+1) == len(s)
	}
	for {
		if i == len(s) || s[i] != '"' {
			return nil, false
		}
		j := i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if c := s[j]; c < 0x20 || c >= 0x7f || c == '\\' {
				return nil, false
			}
		}
		if j == len(s) {
			return nil, false
		}
		list = append(list, s[i+1:j])
		i = skipSpace(s, j+1)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return list, skipSpace(s, i+1) == len(s)
		}
		return nil, false
	}
}

// skipSpace returns the index of the first byte of s from i that is not
// JSON whitespace.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// strList scans a JSON array of strings, as tags, channels and person
// fields are kept.
type strList []string

func (l *strList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil: // an optional list (depends_on): none
		*l = strList{}
		return nil
	default:
		return fmt.Errorf("scan list: %T is not JSON text", src)
	}
	if s, ok := src.(string); ok {
		if list, ok := plainList(s); ok {
			*l = list
			return nil
		}
	}
	*l = strList{}
	if err := json.Unmarshal(b, (*[]string)(l)); err != nil {
		return fmt.Errorf("decode list: %w", err)
	}
	return nil
}
