package monitors

import (
	"encoding/json"
	"time"
)

// DecodeState reads the JSON of a state into s, as [State.UnmarshalJSON]
// does, including a state stored before retry chains were kept per
// occurrence (a single "retry").
//
// Every batch of pings and every claim of the evaluator decodes one state
// per monitor, and encoding/json was most of the cost of reading a
// monitor's row. So the JSON is read here by hand, in one pass and
// without reflection, when it holds only what [AppendStateJSON] writes,
// in any order and with any whitespace (PostgreSQL's jsonb reorders keys
// and adds spaces): each key once, exactly as spelled in State's tags,
// strings of printable ASCII without escapes, integers, true and false,
// instants read by [time.Time.UnmarshalJSON] as encoding/json would. Any
// other input (null, an escape, a key of another release, a key twice,
// another spelling of a key, a malformed document) is handed to
// encoding/json as it is, so the result, or the error, is always the
// standard decoder's. TestDecodeStateIsUnmarshal keeps the two the same.
func DecodeState(b []byte, s *State) error {
	d := stateDecoder{b: b}
	var fast State
	if d.state(&fast) && d.end() {
		*s = fast
		return nil
	}
	return decodeStateJSON(b, s)
}

// decodeStateJSON is DecodeState through encoding/json.
func decodeStateJSON(b []byte, s *State) error {
	type plain State
	var v struct {
		plain
		Retry *RetryWait `json:"retry"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = State(v.plain)
	if v.Retry != nil && len(s.Retries) == 0 {
		s.Retries = []RetryWait{*v.Retry}
	}
	return nil
}

// stateDecoder reads the JSON AppendStateJSON writes. Each method reports
// whether it read what it expected; false sends the whole document to
// encoding/json.
type stateDecoder struct {
	b []byte
	i int
}

// ws skips JSON whitespace.
func (d *stateDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (d *stateDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// byte reads c, after whitespace.
func (d *stateDecoder) byte(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling field for each key, each of which must
// be new: a bit of seen for each of its fields, from field's answer.
func (d *stateDecoder) object(field func(key []byte) (bit uint32, ok bool)) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	var seen uint32
	for {
		d.ws()
		k, ok := d.rawString()
		if !ok || !d.byte(':') {
			return false
		}
		d.ws()
		bit, ok := field(k)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.byte(',') {
			continue
		}
		return d.byte('}')
	}
}

// array reads an array, calling elem for each element after the first
// '['; it reports whether it was read and how many elements it had.
func (d *stateDecoder) array(elem func() bool) bool {
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte(']')
	}
}

// rawString reads a string of printable ASCII without escapes and returns
// its contents, which alias the input. Anything else is not read:
// encoding/json unescapes and replaces invalid UTF-8.
func (d *stateDecoder) rawString() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := d.b[d.i+1 : j]
			d.i = j + 1
			return s, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value; the values a state repeats most are not
// copied.
func (d *stateDecoder) str(dst *string) bool {
	s, ok := d.rawString()
	if ok {
		*dst = internState(s)
	}
	return ok
}

// internState returns s as a string, without a copy for the statuses and
// kinds states hold.
func internState(s []byte) string {
	if v, ok := stateNames[string(s)]; ok {
		return v
	}
	return string(s)
}

// stateNames are the strings a state repeats: statuses, ping and incident
// kinds.
var stateNames = func() map[string]string {
	names := map[string]string{}
	for _, n := range []string{string(StatusNew), string(StatusUp), string(StatusRunning), string(StatusLate),
		string(StatusRetrying), string(StatusDown), string(StatusPaused), string(StatusUndeclared),
		string(PingStart), string(PingSuccess), string(PingFail), string(PingLog), string(PingSkip), string(PingCancel)} {
		names[n] = n
	}
	for _, k := range IncidentKinds {
		names[string(k)] = string(k)
	}
	return names
}()

// time reads an instant as encoding/json does: the quoted literal handed
// to time.Time.UnmarshalJSON.
func (d *stateDecoder) time(t *time.Time) bool {
	start := d.i
	if _, ok := d.rawString(); !ok {
		return false
	}
	return t.UnmarshalJSON(d.b[start:d.i]) == nil
}

// times reads an array of instants.
func (d *stateDecoder) times(ts *[]time.Time) bool {
	out := []time.Time{}
	ok := d.array(func() bool {
		var t time.Time
		if !d.time(&t) {
			return false
		}
		out = append(out, t)
		return true
	})
	*ts = out
	return ok
}

// int64 reads an integer in JSON's syntax that fits in 64 bits (and in
// an int: Vigil builds for 64-bit platforms only, where int is int64, which
// the test checks).
func (d *stateDecoder) int64(n *int64) bool {
	i, neg := d.i, false
	if i < len(d.b) && d.b[i] == '-' {
		neg = true
		i++
	}
	start := i
	var v uint64
	for ; i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9'; i++ {
		if i-start >= 18 { // more digits than always fit: let encoding/json say
			return false
		}
		v = v*10 + uint64(d.b[i]-'0')
	}
	if i == start || (d.b[start] == '0' && i > start+1) {
		return false
	}
	if i < len(d.b) {
		if c := d.b[i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	d.i = i
	*n = int64(v)
	if neg {
		*n = -*n
	}
	return true
}

func (d *stateDecoder) int(n *int) bool {
	var v int64
	ok := d.int64(&v)
	*n = int(v)
	return ok
}

// bool reads true or false.
func (d *stateDecoder) bool(v *bool) bool {
	rest := d.b[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*v = true
		d.i += 4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*v = false
		d.i += 5
	default:
		return false
	}
	return d.i == len(d.b) || !isLiteralByte(d.b[d.i])
}

// isLiteralByte reports whether c would continue a literal such as true.
func isLiteralByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// state reads a State.
func (d *stateDecoder) state(s *State) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "status":
			return 1 << 0, d.str((*string)(&s.Status))
		case "last_ping_at":
			return 1 << 1, d.time(&s.LastPingAt)
		case "last_ping_kind":
			return 1 << 2, d.str((*string)(&s.LastPingKind))
		case "last_success_at":
			return 1 << 3, d.time(&s.LastSuccessAt)
		case "expected":
			return 1 << 4, d.time(&s.Expected)
		case "deadline_occ":
			return 1 << 5, d.time(&s.DeadlineOcc)
		case "deadline_done":
			return 1 << 6, d.times(&s.DeadlineDone)
		case "retries":
			s.Retries = []RetryWait{}
			return 1 << 7, d.array(func() bool {
				s.Retries = append(s.Retries, RetryWait{})
				return d.retry(&s.Retries[len(s.Retries)-1])
			})
		case "missed":
			s.Missed = new(MissedOcc)
			return 1 << 8, d.missed(s.Missed)
		case "runs":
			s.Runs = []OpenRun{}
			return 1 << 9, d.array(func() bool {
				s.Runs = append(s.Runs, OpenRun{})
				return d.run(&s.Runs[len(s.Runs)-1])
			})
		case "run_seq":
			return 1 << 10, d.int64(&s.RunSeq)
		case "failures":
			return 1 << 11, d.int(&s.Failures)
		case "successes":
			return 1 << 12, d.int(&s.Successes)
		case "open":
			s.Open = map[IncidentKind]time.Time{}
			return 1 << 13, d.kinds(func(k IncidentKind) bool {
				var t time.Time
				ok := d.time(&t)
				s.Open[k] = t
				return ok
			})
		case "hold":
			s.Hold = new(Hold)
			return 1 << 14, d.hold(s.Hold)
		case "held":
			s.Held = map[IncidentKind]HeldNotice{}
			return 1 << 15, d.kinds(func(k IncidentKind) bool {
				var h HeldNotice
				ok := d.held(&h)
				s.Held[k] = h
				return ok
			})
		case "ran":
			s.Ran = []RanOcc{}
			return 1 << 16, d.array(func() bool {
				s.Ran = append(s.Ran, RanOcc{})
				return d.ran(&s.Ran[len(s.Ran)-1])
			})
		case "undeclared":
			return 1 << 17, d.bool(&s.Undeclared)
		case "notified":
			return 1 << 18, d.bool(&s.Notified)
		case "late_occ":
			return 1 << 19, d.time(&s.LateOcc)
		case "resolves":
			return 1 << 20, d.times(&s.Resolves)
		case "flapping":
			return 1 << 21, d.time(&s.Flapping)
		case "flap_last":
			return 1 << 22, d.time(&s.FlapLast)
		}
		return 0, false
	})
}

// kinds reads an object keyed by incident kind, calling value for each;
// of a kind twice the last is kept, as encoding/json keeps it.
func (d *stateDecoder) kinds(value func(k IncidentKind) bool) bool {
	return d.object(func(k []byte) (uint32, bool) { return 0, value(IncidentKind(internState(k))) })
}

func (d *stateDecoder) retry(r *RetryWait) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "at":
			return 1 << 0, d.time(&r.At)
		case "attempt":
			return 1 << 1, d.int(&r.Attempt)
		case "fail_at":
			return 1 << 2, d.time(&r.FailAt)
		case "occ":
			return 1 << 3, d.time(&r.Occ)
		case "keyed":
			return 1 << 4, d.bool(&r.Keyed)
		}
		return 0, false
	})
}

func (d *stateDecoder) missed(m *MissedOcc) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "occ":
			return 1 << 0, d.time(&m.Occ)
		case "retry":
			return 1 << 1, d.bool(&m.Retry)
		}
		return 0, false
	})
}

func (d *stateDecoder) run(r *OpenRun) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "seq":
			return 1 << 0, d.int64(&r.Seq)
		case "rid":
			return 1 << 1, d.str(&r.RID)
		case "started_at":
			return 1 << 2, d.time(&r.StartedAt)
		case "attempt":
			return 1 << 3, d.int(&r.Attempt)
		case "stuck":
			return 1 << 4, d.bool(&r.Stuck)
		case "occ":
			return 1 << 5, d.time(&r.Occ)
		case "keyed":
			return 1 << 6, d.bool(&r.Keyed)
		case "retry":
			return 1 << 7, d.bool(&r.Retry)
		case "early":
			return 1 << 8, d.bool(&r.Early)
		}
		return 0, false
	})
}

func (d *stateDecoder) hold(h *Hold) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "outage_end":
			return 1 << 0, d.time(&h.OutageEnd)
		case "until":
			return 1 << 1, d.time(&h.Until)
		}
		return 0, false
	})
}

func (d *stateDecoder) held(h *HeldNotice) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "snooze":
			return 1 << 0, d.bool(&h.Snooze)
		case "parent":
			return 1 << 1, d.str(&h.Parent)
		case "check_at":
			return 1 << 2, d.time(&h.CheckAt)
		case "flapping":
			return 1 << 3, d.bool(&h.Flapping)
		}
		return 0, false
	})
}

func (d *stateDecoder) ran(r *RanOcc) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "at":
			return 1 << 0, d.time(&r.At)
		case "runs":
			return 1 << 1, d.int(&r.Runs)
		}
		return 0, false
	})
}
