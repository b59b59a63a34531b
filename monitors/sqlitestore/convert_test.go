package sqlitestore

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestStrListIsUnmarshal checks that a list read by plainList is what
// encoding/json reads, and that what plainList leaves to encoding/json
// reads as before: random lists of plain and unplain strings, with
// whitespace, and mangled by a byte changed, dropped or added.
func TestStrListIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"", "prod", "db-backup", "ch_0123", "a b", `q"`, `\`, "é", "\x01", "<&>"}
	var plain int
	for i := range 20000 {
		list := make([]string, r.IntN(5))
		for j := range list {
			list[j] = words[r.IntN(len(words))]
		}
		b, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		switch i % 4 {
		case 1:
			s = " " + strings.ReplaceAll(strings.ReplaceAll(s, ",", " ,\n"), "[", "[\t") + "\r"
		case 2, 3:
			at := r.IntN(len(s))
			switch r.IntN(3) {
			case 0:
				s = s[:at] + string(`[]",\ x`[r.IntN(7)]) + s[at+1:]
			case 1:
				s = s[:at] + s[at+1:]
			case 2:
				s = s[:at] + string(`[]",\ x`[r.IntN(7)]) + s[at:]
			}
		}
		var want []string
		wantErr := json.Unmarshal([]byte(s), &want)
		got, ok := plainList(s)
		if ok {
			plain++
			if wantErr != nil {
				t.Fatalf("%q: read, but encoding/json fails: %v", s, wantErr)
			}
			if !reflect.DeepEqual([]string(got), want) {
				t.Fatalf("%q: read %#v, encoding/json %#v", s, got, want)
			}
		}
		var l strList
		err = l.Scan(s)
		if (err == nil) != (wantErr == nil) || (err == nil && !reflect.DeepEqual([]string(l), want) && !(len(l) == 0 && want == nil)) {
			t.Fatalf("%q: Scan %#v (%v), encoding/json %#v (%v)", s, l, err, want, wantErr)
		}
	}
	if plain < 5000 {
		t.Fatalf("only %d lists read by plainList", plain)
	}
}
