package monitors

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// plainRandomStrings are the strings of randomStrings that JSON writes as
// they are.
var plainRandomStrings = []string{"", "missed", "failed", "up", "down", "run-1", "x y"}

// decodeFast is DecodeState's hand-written path alone: false when it
// hands the document to encoding/json.
func decodeFast(b []byte) (State, bool) {
	d := stateDecoder{b: b}
	var s State
	ok := d.state(&s) && d.end()
	return s, ok
}

// checkDecode checks one document: what DecodeState gives, value or
// error, is what encoding/json gives, and so is what the hand-written
// path gives whenever it reads the document itself. It reports whether
// that path read it.
func checkDecode(t *testing.T, what string, b []byte) bool {
	t.Helper()
	var want State
	wantErr := decodeStateJSON(b, &want)
	var got State
	err := DecodeState(b, &got)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%s: DecodeState error %v, encoding/json's %v\n%s", what, err, wantErr, b)
	}
	fast, ok := decodeFast(b)
	if ok && wantErr != nil {
		t.Fatalf("%s: read by hand, but encoding/json fails (%v)\n%s", what, wantErr, b)
	}
	if wantErr != nil {
		return ok
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: DecodeState\n got %#v\nwant %#v\n%s", what, got, want, b)
	}
	if ok && !reflect.DeepEqual(fast, want) {
		t.Fatalf("%s: read by hand\n got %#v\nwant %#v\n%s", what, fast, want, b)
	}
	return ok
}

// TestDecodeStateIsUnmarshal fills every field of State, and of every type
// inside it, by reflection with random values (as
// TestAppendStateJSONIsMarshal does), encodes each state, and checks that
// DecodeState reads back what encoding/json reads, deeply equal, zones
// and all: as AppendStateJSON writes it, with PostgreSQL's jsonb order
// and spacing, with whitespace anywhere, and mangled (a byte changed,
// dropped or added, a key twice, two states in one object, a key spelled otherwise, a null, a key
// of another release), where both must fail alike or agree. A field added
// to State without its decoding makes the hand-written path hand every
// state holding it to encoding/json, which fails the count at the end.
func TestDecodeStateIsUnmarshal(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Fatal("the hand-written decoder reads ints as 64 bits")
	}
	r := rand.New(rand.NewPCG(3, 4))
	var (
		states, fast int
		prev         = []byte(`{"status":"up"}`)
	)
	for i := range 20000 {
		var s State
		if i%2 == 0 {
			fillRandomWith(r, reflect.ValueOf(&s).Elem(), plainRandomStrings)
		} else {
			fillRandom(r, reflect.ValueOf(&s).Elem())
		}
		b, err := AppendStateJSON(nil, &s)
		if err != nil {
			continue
		}
		states++
		if checkDecode(t, "state "+strconv.Itoa(i), b) {
			fast++
		} else if plainStrings(b) {
			t.Fatalf("state %d: not read by hand, though it holds only plain strings\n%s", i, b)
		}
		checkDecode(t, "jsonb "+strconv.Itoa(i), jsonbText(t, b))
		var indented bytes.Buffer
		if err := json.Indent(&indented, b, "\t", "  "); err != nil {
			t.Fatal(err)
		}
		checkDecode(t, "indented "+strconv.Itoa(i), indented.Bytes())
		for range 4 {
			checkDecode(t, "mangled "+strconv.Itoa(i), mangle(r, b))
		}
		// Two states in one object: the keys they share twice, which
		// encoding/json merges (maps, a missed occurrence, a hold).
		merged := append(append(bytes.Clone(b[:len(b)-1]), ','), prev[1:]...)
		checkDecode(t, "merged "+strconv.Itoa(i), merged)
		prev = b
	}
	if states < 10000 || fast < states/3 {
		t.Fatalf("of %d states encoded, %d read by hand", states, fast)
	}
}

// TestDecodeStateReadsJSONB checks that a state as PostgreSQL's jsonb
// gives it back (keys by length, a space after each colon and comma), and
// the legacy single retry, decode, the former by hand.
func TestDecodeStateReadsJSONB(t *testing.T) {
	jsonb := `{"open": {"missed": "2026-01-01T00:02:00Z"}, "runs": [{"seq": 7, "rid": "r1", "started_at": "2026-01-01T00:01:00.5Z", "occ": "2026-01-01T01:00:00+01:00"}], "status": "down", "expected": "2026-01-01T00:03:00Z", "failures": -2, "run_seq": 7, "last_ping_at": "2026-01-01T00:01:00Z", "last_ping_kind": "start"}`
	if !checkDecode(t, "jsonb", []byte(jsonb)) {
		t.Fatalf("not read by hand: %s", jsonb)
	}
	var s State
	if err := DecodeState([]byte(jsonb), &s); err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusDown || s.Failures != -2 || s.Runs[0].Occ.Format(time.RFC3339) != "2026-01-01T01:00:00+01:00" ||
		!s.Open[IncidentMissed].Equal(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)) {
		t.Fatalf("decoded %#v", s)
	}
	legacy := []byte(`{"status":"up","retry":{"at":"2026-01-01T00:00:00Z","fail_at":"2026-01-01T00:05:00Z"}}`)
	checkDecode(t, "legacy", legacy)
	if err := DecodeState(legacy, &s); err != nil || len(s.Retries) != 1 || s.Retries[0].FailAt.Minute() != 5 {
		t.Fatalf("legacy retry: %v %#v", err, s)
	}
}

// FuzzDecodeState checks what TestDecodeStateIsUnmarshal checks on any
// input.
func FuzzDecodeState(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		var s State
		fillRandom(r, reflect.ValueOf(&s).Elem())
		if b, err := AppendStateJSON(nil, &s); err == nil {
			f.Add(b)
		}
	}
	for _, seed := range []string{``, `null`, `{}`, `{"status":null}`, `{"failures":1e3}`, `{"failures":01}`,
		`{"failures":-}`, `{"failures":99999999999999999999}`, `{"notified":tru}`, `{"open":{"a":"x"}}`,
		`{"status":"up"} x`, `{"Status":"up"}`, `{"status":"up","status":"down"}`, `{"runs":[{"seq":1},]}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, "fuzz", b) })
}

// plainStrings reports whether every string of b is printable ASCII
// without escapes, what the hand-written path reads.
func plainStrings(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// jsonbText returns b as PostgreSQL's jsonb prints it: the keys of every
// object shorter first, then bytewise, a space after each colon and
// comma.
func jsonbText(t *testing.T, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var out []byte
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sortJSONBKeys(keys)
			out = append(out, '{')
			for i, k := range keys {
				if i > 0 {
					out = append(out, ", "...)
				}
				kb, _ := json.Marshal(k)
				out = append(append(out, kb...), ": "...)
				write(v[k])
			}
			out = append(out, '}')
		case []any:
			out = append(out, '[')
			for i, e := range v {
				if i > 0 {
					out = append(out, ", "...)
				}
				write(e)
			}
			out = append(out, ']')
		default:
			eb, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, eb...)
		}
	}
	write(v)
	return out
}

func sortJSONBKeys(keys []string) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && (len(keys[j]) < len(keys[j-1]) || len(keys[j]) == len(keys[j-1]) && keys[j] < keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

// mangle returns a copy of b changed in one of the ways a document the
// hand-written path does not expect can differ.
func mangle(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	at := r.IntN(len(out))
	switch r.IntN(8) {
	case 0:
		out[at] = "{}[]:,\"\\ 0-1eE.tfnulXZ+"[r.IntN(23)]
	case 1:
		out = append(out[:at:at], out[at+1:]...)
	case 2:
		out = append(out[:at:at], append([]byte{"{}[]:,\" 0-9aZ"[r.IntN(13)]}, b[at:]...)...)
	case 3: // the first key twice
		if i := bytes.IndexByte(out[1:], ','); i > 0 {
			out = append(append(out[:i+2:i+2], out[1:i+1]...), append([]byte{','}, out[i+2:]...)...)
		}
	case 4: // a key spelled in capitals
		out = bytes.Replace(out, []byte(`"status"`), []byte(`"STATUS"`), 1)
		out = bytes.Replace(out, []byte(`"at"`), []byte(`"At"`), 1)
	case 5: // a null
		if i := bytes.IndexByte(out, ':'); i > 0 {
			out = append(out[:i+1:i+1], append([]byte("null"), out[i+1+valueLen(out[i+1:]):]...)...)
		}
	case 6: // a key of another release
		out = append([]byte(`{"later_field":{"x":[1,2]},`), out[1:]...)
	case 7: // a number where a string or an instant was
		out = bytes.Replace(out, []byte(`":"`), []byte(`":12,"x":"`), 1)
	}
	return out
}

// valueLen returns the length of the JSON value b begins with, or 0.
func valueLen(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return 0
	}
	return int(dec.InputOffset())
}
