package monitors

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// AppendStateJSON appends to dst the JSON that stores keep of s: the bytes
// json.Marshal(s.UTC()) writes, field for field, in the same order and
// with the same omissions, without reflection or the copies UTC makes.
// The evaluator and every batch of pings encode one state per monitor they
// write; json.Marshal was a tenth of the evaluator's CPU.
// TestAppendStateJSONIsMarshal keeps the two the same for every field,
// including fields added to State later.
func AppendStateJSON(dst []byte, s *State) ([]byte, error) {
	e := stateJSON{b: dst}
	e.b = append(e.b, `{"status":`...)
	e.str(string(s.Status))
	e.timeZ(",\"last_ping_at\":", s.LastPingAt.UTC())
	if s.LastPingKind != "" {
		e.b = append(e.b, `,"last_ping_kind":`...)
		e.str(string(s.LastPingKind))
	}
	e.timeZ(",\"last_success_at\":", s.LastSuccessAt.UTC())
	e.timeZ(",\"expected\":", s.Expected.UTC())
	e.timeZ(",\"deadline_occ\":", s.DeadlineOcc.UTC())
	e.times(",\"deadline_done\":", s.DeadlineDone)
	if len(s.Retries) > 0 {
		e.b = append(e.b, `,"retries":[`...)
		for i := range s.Retries {
			r := &s.Retries[i]
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"at":`...)
			e.time(r.At.UTC())
			e.intZ(",\"attempt\":", int64(r.Attempt))
			e.b = append(e.b, `,"fail_at":`...)
			e.time(r.FailAt.UTC())
			e.timeZ(",\"occ\":", r.Occ.UTC())
			e.boolZ(",\"keyed\":true", r.Keyed)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	if m := s.Missed; m != nil {
		e.b = append(e.b, `,"missed":{"occ":`...)
		e.time(m.Occ.UTC())
		e.boolZ(",\"retry\":true", m.Retry)
		e.b = append(e.b, '}')
	}
	if len(s.Runs) > 0 {
		e.b = append(e.b, `,"runs":[`...)
		for i := range s.Runs {
			r := &s.Runs[i]
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"seq":`...)
			e.b = strconv.AppendInt(e.b, r.Seq, 10)
			if r.RID != "" {
				e.b = append(e.b, `,"rid":`...)
				e.str(r.RID)
			}
			e.b = append(e.b, `,"started_at":`...)
			e.time(r.StartedAt.UTC())
			e.intZ(",\"attempt\":", int64(r.Attempt))
			e.boolZ(",\"stuck\":true", r.Stuck)
			// State.UTC leaves a run's occurrence as it is.
			e.timeZ(",\"occ\":", r.Occ)
			e.boolZ(",\"keyed\":true", r.Keyed)
			e.boolZ(",\"retry\":true", r.Retry)
			e.boolZ(",\"early\":true", r.Early)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.intZ(",\"run_seq\":", s.RunSeq)
	e.intZ(",\"failures\":", int64(s.Failures))
	e.intZ(",\"successes\":", int64(s.Successes))
	if len(s.Open) > 0 {
		e.b = append(e.b, `,"open":{`...)
		for i, k := range sortedKinds(s.Open) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(string(k))
			e.b = append(e.b, ':')
			e.time(s.Open[k].UTC())
		}
		e.b = append(e.b, '}')
	}
	if h := s.Hold; h != nil {
		e.b = append(e.b, `,"hold":{"outage_end":`...)
		e.time(h.OutageEnd.UTC())
		e.b = append(e.b, `,"until":`...)
		e.time(h.Until.UTC())
		e.b = append(e.b, '}')
	}
	if len(s.Held) > 0 {
		e.b = append(e.b, `,"held":{`...)
		for i, k := range sortedKinds(s.Held) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(string(k))
			e.b = append(e.b, ':')
			e.held(s.Held[k])
		}
		e.b = append(e.b, '}')
	}
	if len(s.Ran) > 0 {
		e.b = append(e.b, `,"ran":[`...)
		for i, r := range s.Ran {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"at":`...)
			e.time(r.At.UTC())
			e.b = append(e.b, `,"runs":`...)
			e.b = strconv.AppendInt(e.b, int64(r.Runs), 10)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.boolZ(",\"undeclared\":true", s.Undeclared)
	e.boolZ(",\"notified\":true", s.Notified)
	e.timeZ(",\"late_occ\":", s.LateOcc.UTC())
	e.times(",\"resolves\":", s.Resolves)
	e.timeZ(",\"flapping\":", s.Flapping.UTC())
	e.timeZ(",\"flap_last\":", s.FlapLast.UTC())
	e.b = append(e.b, '}')
	if e.err != nil {
		return dst, e.err
	}
	return e.b, nil
}

// stateJSON is AppendStateJSON's output, and the first error.
type stateJSON struct {
	b   []byte
	err error
}

// held appends a held notice: its fields as json.Marshal writes them.
func (e *stateJSON) held(h HeldNotice) {
	start := len(e.b)
	e.b = append(e.b, '{')
	sep := func() {
		if len(e.b) > start+1 {
			e.b = append(e.b, ',')
		}
	}
	if h.Snooze {
		e.b = append(e.b, `"snooze":true`...)
	}
	if h.Parent != "" {
		sep()
		e.b = append(e.b, `"parent":`...)
		e.str(h.Parent)
	}
	if !h.CheckAt.IsZero() {
		sep()
		e.b = append(e.b, `"check_at":`...)
		e.time(h.CheckAt.UTC())
	}
	if h.Flapping {
		sep()
		e.b = append(e.b, `"flapping":true`...)
	}
	e.b = append(e.b, '}')
}

// timeZ appends key and t unless t is zero (omitzero).
func (e *stateJSON) timeZ(key string, t time.Time) {
	if t.IsZero() {
		return
	}
	e.b = append(e.b, key...)
	e.time(t)
}

// times appends key and ts unless ts is empty (omitempty), each in UTC.
func (e *stateJSON) times(key string, ts []time.Time) {
	if len(ts) == 0 {
		return
	}
	e.b = append(e.b, key...)
	e.b = append(e.b, '[')
	for i, t := range ts {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.time(t.UTC())
	}
	e.b = append(e.b, ']')
}

// intZ appends key and n unless n is 0 (omitempty).
func (e *stateJSON) intZ(key string, n int64) {
	if n != 0 {
		e.b = append(e.b, key...)
		e.b = strconv.AppendInt(e.b, n, 10)
	}
}

// boolZ appends field, a key with its true value, when v is set
// (omitempty).
func (e *stateJSON) boolZ(field string, v bool) {
	if v {
		e.b = append(e.b, field...)
	}
}

// time appends t as time.Time's MarshalJSON does: RFC 3339 with
// nanoseconds, quoted, an error for a year it cannot write.
func (e *stateJSON) time(t time.Time) {
	if t.Location() != time.UTC {
		// Only a run's occurrence keeps its zone; MarshalJSON checks the
		// offset too.
		b, err := t.MarshalJSON()
		if err != nil && e.err == nil {
			e.err = err
		}
		e.b = append(e.b, b...)
		return
	}
	if y := t.Year(); y < 0 || y > 9999 {
		if e.err == nil {
			e.err = errors.New("Time.MarshalJSON: year outside of range [0,9999]")
		}
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

// str appends s as a JSON string, escaped as json.Marshal escapes it.
func (e *stateJSON) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			// Rare in a state (kinds, statuses, run IDs): the standard
			// encoder's escaping.
			b, _ := json.Marshal(s) // a string always encodes
			e.b = append(e.b, b...)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// sortedKinds returns the keys of m in the order json.Marshal writes them.
func sortedKinds[V any](m map[IncidentKind]V) []IncidentKind {
	keys := make([]IncidentKind, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b IncidentKind) int { return strings.Compare(string(a), string(b)) })
	return keys
}
