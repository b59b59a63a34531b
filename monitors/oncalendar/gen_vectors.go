//go:build ignore

// gen_vectors asks systemd-analyze calendar (systemd 252) for the elapses
// of the curated expressions and a fixed set of random ones, in every zone
// of oracle.Zones, from base times around each 2026 transition, and for
// which expressions it refuses, and writes testdata/systemd252.jsonl.
// TestVectors reads that file, so CI needs no systemd.
//
// It also writes testdata/chains252.jsonl: for every curated expression
// and every 2026 transition of every zone, the elapses of a timer that was
// started well before the transition (systemd computing each elapse from
// the one before, as a timer does from its last trigger), kept from ten
// before the transition to ten after it. The chain tests and the monitors'
// no-false-alarm test read it.
//
//	go run gen_vectors.go
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors/oncalendar/internal/oracle"
)

// vector is one line of the file: an expression's elapses in a zone from a
// base time, or (Invalid) an expression systemd refuses.
type vector struct {
	TZ         string  `json:"tz,omitempty"`
	Base       int64   `json:"base,omitempty"`
	Expr       string  `json:"expr"`
	Normalized string  `json:"normalized,omitempty"`
	Next       []int64 `json:"next,omitempty"`
	Stuck      bool    `json:"stuck,omitempty"`
	Invalid    bool    `json:"invalid,omitempty"`
}

const iterations = 6

// invalid are expressions people get wrong; each must be refused.
var invalid = []string{
	"", " UTC", "Mon..", "Fri..Mon", "Mon-Wed-Fri 12:00", "Mond 12:00", "*/15:00", "*:*/15", "*:50/15",
	"24:00", "12:60", "12:00:60", "4..1:00", "*-13-01", "*-00-01", "*-*-32", "*-*-00", "*-*~29", "*-*~25,26",
	"1969-01-01", "2200-01-01", "*-*-* 12", "12:00 Mars/Olympus", "every day", "@", "@x", "12:00:00.", "1:2:3:4",
	"*:0/0", "*-*~01/2", "daily weekly", "*-02-*~3", "0..5/0:00", "00:00:00.5..00.7", "**:00", "-1:00",
}

func main() {
	log.SetFlags(0)
	if out, err := exec.Command("systemd-analyze", "--version").Output(); err != nil || !strings.HasPrefix(string(out), "systemd 252 ") {
		log.Fatalf("systemd-analyze 252 is needed (got %q, %v)", firstLine(out), err)
	}
	ctx := context.Background()
	exprs := append([]string(nil), oracle.Curated...)
	r := rand.New(rand.NewPCG(252, 252))
	seen := map[string]bool{}
	for _, e := range exprs {
		seen[e] = true
	}
	for added := 0; added < 60; {
		e := oracle.Random(r)
		if seen[e] {
			continue
		}
		seen[e] = true
		ok, err := oracle.Parses(ctx, "UTC", e)
		if err != nil {
			log.Fatal(err)
		}
		if ok {
			exprs = append(exprs, e)
			added++
		} else if len(invalid) < 80 {
			invalid = append(invalid, e)
		}
	}

	f, err := os.Create("testdata/systemd252.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	n := 0
	for _, e := range invalid {
		ok, err := oracle.Parses(ctx, "UTC", e)
		if err != nil {
			log.Fatal(err)
		}
		if ok {
			log.Fatalf("systemd accepts %q, listed as invalid", e)
		}
		must(enc.Encode(vector{Expr: e, Invalid: true}))
		n++
	}
	for _, zone := range oracle.Zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			log.Fatal(err)
		}
		for _, base := range oracle.BaseTimes(loc) {
			res, err := oracle.Calendar(ctx, zone, base.Unix(), iterations, exprs)
			if err != nil {
				log.Fatal(err)
			}
			for _, x := range res {
				must(enc.Encode(vector{TZ: zone, Base: base.Unix(), Expr: x.Expr, Normalized: x.Normalized, Next: x.Next, Stuck: x.Stuck}))
				n++
			}
		}
	}
	must(f.Close())
	fmt.Printf("wrote %d vectors (%d expressions, %d invalid)\n", n, len(exprs), len(invalid))
	fmt.Printf("wrote %d chains\n", writeChains(ctx))
}

// chain is one line of testdata/chains252.jsonl: the elapses of expr in tz
// of a timer started at base, from ten before the transition at tr to ten
// after it (fewer when there are no more, or when systemd got stuck).
type chain struct {
	TZ    string  `json:"tz"`
	Tr    int64   `json:"tr"`
	Base  int64   `json:"base"`
	Expr  string  `json:"expr"`
	Next  []int64 `json:"next"`
	Stuck bool    `json:"stuck,omitempty"`
}

// chainIterations is how many elapses each chain asks systemd for.
const chainIterations = 240

// chainStarts are how long before a transition a chain may start: the
// furthest one whose elapses still reach ten past the transition is used,
// so that the chain is a long-running timer's when it gets there. Each is
// more than an hour before, out of every zone's repeated or skipped hour.
var chainStarts = []time.Duration{72 * time.Hour, 26 * time.Hour, 7 * time.Hour, 3 * time.Hour, 2 * time.Hour, 70 * time.Minute}

func writeChains(ctx context.Context) int {
	f, err := os.Create("testdata/chains252.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	n := 0
	for _, zone := range oracle.Zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			log.Fatal(err)
		}
		trs := oracle.Transitions(loc, 2026)
		if len(trs) == 0 {
			trs = []time.Time{time.Date(2026, 3, 8, 2, 0, 0, 0, loc)}
		}
		for _, tr := range trs {
			runs := make([][]oracle.Result, len(chainStarts))
			for i, d := range chainStarts {
				if runs[i], err = oracle.Calendar(ctx, zone, tr.Add(-d).Unix(), chainIterations, oracle.Curated); err != nil {
					log.Fatal(err)
				}
			}
			for k, expr := range oracle.Curated {
				if strings.Contains(strings.ReplaceAll(expr, "..", ""), ".") {
					// systemd-analyze prints whole seconds: a fraction
					// would be lost.
					continue
				}
				var pick *oracle.Result
				var base time.Time
				for i, d := range chainStarts {
					r := &runs[i][k]
					after := 0
					for _, u := range r.Next {
						if u >= tr.Unix() {
							after++
						}
					}
					// Enough past the transition, or all there is.
					if after >= 10 || len(r.Next) < chainIterations && !r.Stuck || i == len(chainStarts)-1 {
						pick, base = r, tr.Add(-d)
						break
					}
				}
				next := pick.Next
				i := 0
				for i < len(next) && next[i] < tr.Unix() {
					i++
				}
				next = next[max(0, i-10):min(len(next), i+10)]
				stuck := pick.Stuck && len(next) == len(pick.Next[max(0, i-10):])
				must(enc.Encode(chain{TZ: zone, Tr: tr.Unix(), Base: base.Unix(), Expr: expr, Next: next, Stuck: stuck}))
				n++
			}
		}
	}
	must(f.Close())
	return n
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
