// Package scaleout_test runs Vigil as an operator would: three vigil serve
// processes of the built binary on one PostgreSQL, Debian's nginx in
// front of them with deploy/nginx/vigil.conf, and load from many monitors
// through nginx while one replica is killed and restarted and then all
// three are restarted one by one. It checks, from the outside, that no
// acknowledged ping is lost, that the answers are the ones a client can
// act on, that every due monitor gets one incident and every channel one
// notification per event, and that detection stays within 2 s.
package scaleout_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/internal/testdb"
)

const (
	healthyMonitors = 100 // pinged all along; never due
	dueMonitors     = 48  // pinged once; due one after another
	pingers         = 8
	pingEvery       = 40 * time.Millisecond // per pinger: about 200 pings/s in all
	deliveryTimeout = 5 * time.Second
	detectionP99Max = 2 * time.Second
	shutdownMax     = 25 * time.Second
	// nginxFailTimeout is fail_timeout in deploy/nginx/vigil.conf.
	nginxFailTimeout = 3 * time.Second
)

// pingStats counts the answers of the load.
type pingStats struct {
	mu       sync.Mutex
	statuses map[int]int // every answer, retries included
	errors   int         // transport errors (nginx unreachable)
	acked    []string    // bodies of the pings answered 200
	retried  int         // pings that needed more than one attempt
	given    []string    // pings that got no 200 after every retry
	start    time.Time
	odd      []string // answers other than 200, with when
}

// ping sends one ping as curl -fsS --retry 5 does: it retries after a
// transport error and after 408, 429, 500, 502, 503 and 504 (honouring
// Retry-After), with a delay doubling from 250 ms (curl's starts at 1 s).
func (s *pingStats) ping(client *http.Client, url, body string) {
	delay := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		resp, err := client.Post(url, "text/plain", strings.NewReader(body))
		status := 0
		retryAfter := time.Duration(0)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
			if ra := resp.Header.Get("Retry-After"); ra != "" {
				var secs int
				if _, serr := fmt.Sscan(ra, &secs); serr == nil {
					retryAfter = time.Duration(secs) * time.Second
				}
			}
		}
		s.mu.Lock()
		if err != nil {
			s.errors++
		} else {
			s.statuses[status]++
		}
		if status != http.StatusOK {
			s.odd = append(s.odd, fmt.Sprintf("%s: %d %v", time.Since(s.start).Round(time.Millisecond), status, err))
		}
		if status == http.StatusOK {
			s.acked = append(s.acked, body)
			if attempt > 0 {
				s.retried++
			}
			s.mu.Unlock()
			return
		}
		retryable := err != nil || slices.Contains([]int{408, 429, 500, 502, 503, 504}, status)
		if !retryable || attempt == 5 {
			s.given = append(s.given, fmt.Sprintf("%s: status %d, err %v", body, status, err))
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(max(delay, retryAfter))
		delay *= 2
	}
}

type monitorInfo struct {
	ID      string `json:"id"`
	PingURL string `json:"ping_url"`
	every   time.Duration
	grace   time.Duration
}

func TestScaleOut(t *testing.T) {
	dbURL := testdb.PostgresURL(t) // a fresh schema; fails without PostgreSQL when CI=true
	bin := buildVigil(t, "../..")
	ctx := context.Background()
	var conn *pgx.Conn

	rc := &receiver{}
	hooksLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hooks := &http.Server{Handler: rc}
	go func() { _ = hooks.Serve(hooksLn) }()
	t.Cleanup(func() { _ = hooks.Close() })
	hooksAddr := hooksLn.Addr().String()

	reps := make([]*replica, 3)
	var upstreams []string
	for i := range reps {
		reps[i] = newReplica(t, fmt.Sprintf("vigil-%d", i+1), bin, nil)
		upstreams = append(upstreams, reps[i].addr)
	}
	front := nginxProxy(t, upstreams)
	env := []string{
		"VIGIL_DATABASE_URL=" + dbURL, "VIGIL_SECRET_KEY_FILE=" + testdb.KeyFile(dbURL),
		"VIGIL_BASE_URL=" + front,
		"VIGIL_ALLOW_PRIVATE_TARGETS=true",
		"VIGIL_TRUSTED_PROXIES=127.0.0.1",
		"VIGIL_PING_RATE_LIMIT=0",
		"VIGIL_KEEP_PINGS=10000000",
		"VIGIL_DELIVERY_TIMEOUT=" + deliveryTimeout.String(),
		"VIGIL_DELIVERY_WORKERS=4",
		"VIGIL_DB_MAX_CONNS=10",
	}
	for _, r := range reps {
		r.env = env
	}
	out := reps[0].start() // first alone: it creates the project
	key := regexp.MustCompile(`vk_[A-Za-z0-9_-]{40,}`).FindString(out)
	require.NotEmpty(t, key, "the bootstrap API key on standard output:\n%s", out)
	reps[1].start()
	reps[2].start()

	// Two default channels, one receiver path each.
	for _, name := range []string{"a", "b"} {
		require.NoError(t, api(ctx, front, key, http.MethodPost, "/api/v1/channels", map[string]any{
			"kind": "webhook", "name": "hook " + name, "is_default": true,
			"config": map[string]any{"url": "http://" + hooksAddr + "/" + name},
		}, nil))
	}
	newMonitor := func(slug string, every, grace time.Duration) *monitorInfo {
		m := &monitorInfo{every: every, grace: grace}
		require.NoError(t, api(ctx, front, key, http.MethodPost, "/api/v1/monitors", map[string]any{
			"name": slug, "slug": slug, "grace_seconds": int(grace.Seconds()),
			"schedule": map[string]any{"kind": "interval", "every_seconds": int(every.Seconds())},
		}, m))
		require.NotEmpty(t, m.PingURL)
		return m
	}
	healthy := make([]*monitorInfo, healthyMonitors)
	for i := range healthy {
		healthy[i] = newMonitor(fmt.Sprintf("healthy-%d", i), time.Hour, time.Hour)
	}
	due := make([]*monitorInfo, dueMonitors)
	stats := &pingStats{statuses: map[int]int{}, start: time.Now()}
	client := &http.Client{Timeout: 20 * time.Second}
	for i := range due {
		// Deadlines one second apart from 13 s to 60 s from now: through
		// the kill, the restart and the rolling restart below.
		due[i] = newMonitor(fmt.Sprintf("due-%d", i), time.Duration(12+i)*time.Second, time.Second)
		stats.ping(client, due[i].PingURL, fmt.Sprintf("due-%d", i))
	}
	require.Empty(t, stats.given)

	// The load: pingers over the healthy monitors, through nginx.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	loadStart := time.Now()
	for g := range pingers {
		wg.Go(func() {
			c := &http.Client{Timeout: 20 * time.Second}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-time.After(pingEvery):
				}
				m := healthy[rand.IntN(len(healthy))]
				stats.ping(c, m.PingURL, fmt.Sprintf("p-%d-%d", g, n))
				sent.Add(1)
			}
		})
	}

	// The disruptions.
	time.Sleep(8 * time.Second)
	t.Logf("%s: SIGKILL %s", time.Since(stats.start).Round(time.Millisecond), reps[1].name)
	reps[1].kill()
	time.Sleep(3 * time.Second)
	reps[1].start()
	t.Logf("%s: %s ready", time.Since(stats.start).Round(time.Millisecond), reps[1].name)
	var exits []time.Duration
	time.Sleep(3 * time.Second)
	for _, r := range reps {
		d, err := r.term()
		require.NoError(t, err, "%s after SIGTERM", r.name)
		require.Less(t, d, shutdownMax, "%s exits within 25 s of SIGTERM", r.name)
		exits = append(exits, d)
		t.Logf("%s: rolling restart: %s exited %s after SIGTERM", time.Since(stats.start).Round(time.Millisecond), r.name, d.Round(time.Millisecond))
		r.start()
		t.Logf("%s: %s ready", time.Since(stats.start).Round(time.Millisecond), r.name)
		// As an operator's rollout waits (Kubernetes: minReadySeconds):
		// nginx sends to a replica it saw fail again only after its
		// fail_timeout, so the next one must not go down before.
		time.Sleep(nginxFailTimeout + 500*time.Millisecond)
	}
	// Until the last deadline has passed, then a little.
	lastDeadline := loadStart.Add(60 * time.Second)
	time.Sleep(time.Until(lastDeadline) + 3*time.Second)
	close(stop)
	wg.Wait()
	loadTime := time.Since(loadStart)

	// Notifications: two channels × one opened event per due monitor.
	rescue := delivery.RescueAfter(deliveryTimeout)
	require.Eventually(t, func() bool {
		n := 0
		for _, x := range rc.all() {
			if x.event == "incident.opened" {
				n++
			}
		}
		return n >= 2*dueMonitors
	}, rescue+15*time.Second, 100*time.Millisecond, "every channel hears of every due monitor")
	time.Sleep(2 * time.Second) // a duplicate would come now

	// 1. Every ping answered 200 is stored.
	conn, err = pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT body FROM pings`)
	require.NoError(t, err)
	stored := map[string]int{}
	for rows.Next() {
		var b string
		require.NoError(t, rows.Scan(&b))
		stored[b]++
	}
	require.NoError(t, rows.Err())
	lost, dup := 0, 0
	for _, b := range stats.acked {
		if stored[b] == 0 {
			lost++
		}
	}
	for _, n := range stored {
		if n > 1 {
			dup += n - 1
		}
	}
	require.Zero(t, lost, "acknowledged pings missing from the database")

	// 2. Only answers a client can act on, and none given up.
	if len(stats.odd) > 0 {
		t.Logf("answers other than 200: %v", stats.odd)
	}
	for status := range stats.statuses {
		require.Contains(t, []int{200, 429, 503}, status, "answer %d through nginx", status)
	}
	require.Zero(t, stats.errors, "nginx always answers")
	require.Empty(t, stats.given, "a client retrying as curl --retry does loses nothing")

	// 3. One incident per due monitor, none for the healthy ones.
	incidents := map[string][]time.Time{}
	ids := map[string]string{}
	rows, err = conn.Query(ctx, `SELECT id, monitor_id, opened_at FROM incidents`)
	require.NoError(t, err)
	for rows.Next() {
		var id, mid string
		var at time.Time
		require.NoError(t, rows.Scan(&id, &mid, &at))
		incidents[mid] = append(incidents[mid], at)
		ids[id] = mid
	}
	require.NoError(t, rows.Err())
	for _, m := range healthy {
		require.Empty(t, incidents[m.ID], "a healthy monitor has no incident")
	}
	var latencies []time.Duration
	for _, m := range due {
		require.Len(t, incidents[m.ID], 1, "a due monitor has exactly one incident")
		var last time.Time
		require.NoError(t, conn.QueryRow(ctx, `SELECT max(at) FROM pings WHERE monitor_id = $1`, m.ID).Scan(&last))
		deadline := last.Add(m.every + m.grace)
		latencies = append(latencies, incidents[m.ID][0].Sub(deadline))
	}
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[(len(latencies)*99+99)/100-1]
	require.GreaterOrEqual(t, latencies[0], time.Duration(0), "no incident before its deadline")
	require.LessOrEqual(t, p99, detectionP99Max, "detection p99 (all: %v)", latencies)

	// 4. Each channel exactly one notification per event; none left
	// behind by the killed replica beyond the rescue time.
	per := map[string]int{}
	var notifyLatency time.Duration
	for _, x := range rc.all() {
		per[x.channel+" "+x.incidentID+" "+x.event]++
		mid, ok := ids[x.incidentID]
		require.True(t, ok, "a notification of a known incident: %+v", x)
		opened := incidents[mid][0]
		notifyLatency = max(notifyLatency, x.at.Sub(opened))
	}
	for k, n := range per {
		require.Equal(t, 1, n, "notifications of %s", k)
	}
	require.Len(t, per, 2*dueMonitors)
	require.Less(t, notifyLatency, rescue, "no delivery waited on the killed replica longer than the rescue time")

	t.Logf("load: %d pings acknowledged in %s (%.0f/s) through nginx to 3 replicas; answers %v; %d needed a retry; %d stored twice (retried after a reset); 0 lost",
		len(stats.acked), loadTime.Round(time.Second), float64(len(stats.acked))/loadTime.Seconds(), stats.statuses, stats.retried, dup)
	t.Logf("detection of %d due monitors: p50 %s, p99 %s, max %s", len(latencies), p50.Round(time.Millisecond),
		p99.Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
	t.Logf("notifications: %d, one per channel and event; slowest %s after its incident opened (rescue time %s)",
		len(per), notifyLatency.Round(time.Millisecond), rescue)
	t.Logf("SIGTERM to exit: %v", exits)
}
