package monitors

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendStateJSONIsMarshal fills every field of State, and of every
// type inside it, with random values (zero or not, in UTC or another zone,
// strings that need escaping, years JSON cannot write) and checks that
// AppendStateJSON writes what json.Marshal(s.UTC()) writes, byte for byte,
// or fails when it fails. The filling walks State by reflection, so a
// field added to State without its encoding fails this test.
func TestAppendStateJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var encoded int
	for i := range 20000 {
		var s State
		fillRandom(r, reflect.ValueOf(&s).Elem())
		want, wantErr := json.Marshal(s.UTC())
		got, err := AppendStateJSON([]byte("x"), &s)
		if wantErr != nil {
			if err == nil {
				t.Fatalf("state %d: json.Marshal failed (%v), AppendStateJSON did not: %s\n%#v", i, wantErr, got, s)
			}
			continue
		}
		if err != nil {
			t.Fatalf("state %d: %v\n%#v", i, err, s)
		}
		if !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("state %d:\n got %s\nwant %s", i, got[1:], want)
		}
		encoded++
	}
	if encoded < 10000 {
		t.Fatalf("only %d of the random states encoded", encoded)
	}
}

// TestAppendStateJSONOfEvaluatedMonitor checks the encoding of a state as
// the state machine leaves it, down with a missed incident.
func TestAppendStateJSONOfEvaluatedMonitor(t *testing.T) {
	m := &Monitor{ID: "m", Name: "job", Schedule: ScheduleSpec{Kind: ScheduleInterval, EverySeconds: 60}}
	m.ApplyDefaults()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	if _, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyTime(m, at.Add(time.Hour), TimeOptions{}); err != nil {
		t.Fatal(err)
	}
	if m.State.Status != StatusDown {
		t.Fatalf("status %s, want down", m.State.Status)
	}
	want, err := json.Marshal(m.State.UTC())
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendStateJSON(nil, &m.State)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %s (%v), want %s", got, err, want)
	}
}

var (
	randomZone    = time.FixedZone("X", -(3*3600 + 30*60))
	randomStrings = []string{"", "missed", "failed", "up", "down", "run-1", `a"b\c`, "<&>", "é", "\u2028", "\x01", "\xff"}
)

// fillRandom sets v, and everything inside it, to random values.
func fillRandom(r *rand.Rand, v reflect.Value) { fillRandomWith(r, v, randomStrings) }

// fillRandomWith is fillRandom with its strings taken from strs.
func fillRandomWith(r *rand.Rand, v reflect.Value, strs []string) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(randomTime(r)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandomWith(r, v.Field(i), strs)
			}
		}
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandomWith(r, v.Elem(), strs)
		}
	case reflect.Slice:
		if n := r.IntN(4); n > 0 || r.IntN(2) == 0 {
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fillRandomWith(r, v.Index(i), strs)
			}
		}
	case reflect.Map:
		if n := r.IntN(4); n > 0 || r.IntN(2) == 0 {
			v.Set(reflect.MakeMap(v.Type()))
			for range n {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fillRandomWith(r, k, strs)
				fillRandomWith(r, e, strs)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		if r.IntN(3) > 0 {
			v.SetInt(r.Int64N(2000) - 1000)
		}
	default:
		panic("fillRandom: no random value for " + v.Type().String())
	}
}

// randomTime returns the zero time, or an instant with nanoseconds in UTC,
// in another zone or in the local one, now and then in a year JSON cannot
// write.
func randomTime(r *rand.Rand) time.Time {
	if r.IntN(4) == 0 {
		return time.Time{}
	}
	t := time.Unix(r.Int64N(4e9), r.Int64N(1e9))
	if r.IntN(200) == 0 {
		t = t.AddDate(9000, 0, 0)
	}
	if r.IntN(4) == 0 {
		t = t.Truncate(time.Second)
	}
	switch r.IntN(3) {
	case 0:
		return t.UTC()
	case 1:
		return t.In(randomZone)
	}
	return t
}
