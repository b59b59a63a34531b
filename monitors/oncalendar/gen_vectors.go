//go:build ignore

// gen_vectors asks systemd-analyze calendar (systemd 252) for the elapses
// of the curated expressions and a fixed set of random ones, in every zone
// of oracle.Zones, from base times around each 2026 transition, and for
// which expressions it refuses, and writes testdata/systemd252.jsonl.
// TestVectors reads that file, so CI needs no systemd.
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
