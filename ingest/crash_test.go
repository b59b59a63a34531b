package ingest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/internal/vigilproc"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/server"
)

// TestCrashLosesNoAcknowledgedPing runs the real binary, drives pings at
// it, kills it with SIGKILL in the middle of the load, starts it again on
// the same database, and checks that every ping that was answered 200 is
// stored: an acknowledgement means the ping is durable.
func TestCrashLosesNoAcknowledgedPing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := vigilproc.Build(t)
	databases := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return testdb.SQLitePath(t) },
		"postgres": func(t *testing.T) string { return testdb.PostgresURL(t) },
	}
	for name, dbURL := range databases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashTest(t, bin, dbURL(t))
		})
	}
}

type acked struct {
	monitor int
	rid     string
}

// loadSetup makes a project with 16 monitors on dbURL, and channel, when
// set, as the project's default channel (a webhook to its URL).
func loadSetup(t *testing.T, dbURL, hookURL string) (*monitors.Project, []*monitors.Monitor) {
	t.Helper()
	ctx := context.Background()
	store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
	require.NoError(t, err)
	defer store.Close()
	prj := storetest.MustProject(t, store)
	var ms []*monitors.Monitor
	for i := range 16 {
		ms = append(ms, storetest.MustMonitor(t, store, prj.ID, fmt.Sprintf("job-%d", i), func(m *monitors.Monitor) {
			m.PingKey = keys.NewPingKey()
			m.Overlap = monitors.OverlapIgnore
		}))
	}
	if hookURL != "" {
		_, err := store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"), ProjectID: prj.ID,
			Kind: "webhook", Name: "hook", Config: []byte(`{"url": "` + hookURL + `"}`), IsDefault: true, Now: time.Now()})
		require.NoError(t, err)
	}
	return prj, ms
}

// pingLoad is a load that load started.
type pingLoad struct {
	// wait returns the acknowledged pings once every worker has ended.
	wait func() []acked
	// acked is closed once enough pings are acknowledged (see load).
	acked chan struct{}
}

// awaitAcked waits until the load has had its pings acknowledged, so that
// a crash or a stop falls in the middle of a load that is running, however
// slow the machine is.
func (l pingLoad) awaitAcked(t *testing.T) {
	t.Helper()
	select {
	case <-l.acked:
	case <-time.After(15 * time.Second):
		t.Fatalf("fewer than %d pings acknowledged in 15 s", loadAcked)
	}
}

// loadAcked is how many acknowledged pings make a load that ran.
const loadAcked = 150

// load drives pings at p from many connections until stop is closed or
// 20 s have passed; each worker ends at its first failed request (the
// process is gone). Its acked channel is closed at the loadAcked-th
// acknowledged ping.
func load(t *testing.T, p *vigilproc.Proc, ms []*monitors.Monitor, stop <-chan struct{}) pingLoad {
	const workers = 12
	var (
		mu      sync.Mutex
		ok      []acked
		refused int
		wg      sync.WaitGroup
		l       = pingLoad{acked: make(chan struct{})}
	)
	loadStart := time.Now()
	for w := range workers {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			kinds := []string{"/start", "", "/log", "/fail", "/1"}
			for n := 0; time.Since(loadStart) < 20*time.Second; n++ {
				select {
				case <-stop:
					return
				default:
				}
				mi := (w + n) % len(ms)
				rid := fmt.Sprintf("w%d-%d", w, n)
				res, err := client.Get(fmt.Sprintf("http://%s/ping/%s%s?rid=%s", p.Addr, ms[mi].PingKey, kinds[n%len(kinds)], rid))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				if res.StatusCode == http.StatusOK {
					ok = append(ok, acked{mi, rid})
					if len(ok) == loadAcked {
						close(l.acked)
					}
				} else {
					refused++
				}
				mu.Unlock()
			}
		})
	}
	l.wait = func() []acked {
		wg.Wait()
		t.Logf("%d pings acknowledged (%d refused)", len(ok), refused)
		return ok
	}
	return l
}

// requireStored checks that every acknowledged ping, and every rid of
// also on the first monitor, is in the store of dbURL.
func requireStored(t *testing.T, dbURL string, prj *monitors.Project, ms []*monitors.Monitor, ok []acked, also ...string) {
	t.Helper()
	ctx := context.Background()
	store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
	require.NoError(t, err)
	defer store.Close()
	stored := make([]map[string]bool, len(ms))
	total := 0
	for i, m := range ms {
		ps, err := store.PingList(ctx, &monitors.HistoryListParams{ProjectID: prj.ID, MonitorID: m.ID})
		require.NoError(t, err)
		stored[i] = make(map[string]bool, len(ps))
		for _, pg := range ps {
			stored[i][pg.RID] = true
		}
		total += len(ps)
	}
	var lost []string
	for _, a := range ok {
		if !stored[a.monitor][a.rid] {
			lost = append(lost, a.rid)
		}
	}
	require.Empty(t, lost, "acknowledged pings lost")
	for _, rid := range also {
		require.True(t, stored[0][rid], rid)
	}
	t.Logf("%d pings stored: every acknowledged one, and %d that were in flight", total, total-len(ok)-len(also))
}

func crashTest(t *testing.T, bin, dbURL string) {
	prj, ms := loadSetup(t, dbURL, "")
	p := vigilproc.Start(t, bin, dbURL)
	l := load(t, p, ms, nil)
	l.awaitAcked(t) // the load runs; then the crash
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGKILL))
	<-p.Done
	ok := l.wait()
	require.GreaterOrEqual(t, len(ok), loadAcked, "the load ran before the crash")

	// The restarted server finds every acknowledged ping, and takes more.
	p2 := vigilproc.Start(t, bin, dbURL)
	res, err := http.Get("http://" + p2.Addr + "/ping/" + ms[0].PingKey + "?rid=after-restart")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, p2.Cmd.Process.Signal(syscall.SIGTERM))
	<-p2.Done
	requireStored(t, dbURL, prj, ms, ok, "after-restart")
}

// TestSIGTERMUnderLoad stops the real binary with SIGTERM in the middle
// of a ping load, with notifications hanging in flight at a receiver that
// never answers: it exits within 25 s, and every ping it acknowledged is
// stored.
func TestSIGTERMUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := vigilproc.Build(t)
	for name, newDB := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return testdb.SQLitePath(t) },
		"postgres": func(t *testing.T) string { return testdb.PostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			inFlight := make(chan struct{}, 1000)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body) // so that a closed connection ends r's context
				inFlight <- struct{}{}
				<-r.Context().Done() // never answers; Vigil gives up
			}))
			t.Cleanup(hook.Close)
			prj, ms := loadSetup(t, dbURL, hook.URL)
			p := vigilproc.Start(t, bin, dbURL, "VIGIL_ALLOW_PRIVATE_TARGETS=true")
			stop := make(chan struct{})
			l := load(t, p, ms, stop)
			select {
			case <-inFlight: // failures opened incidents; their sends hang
			case <-time.After(20 * time.Second):
				t.Fatal("no notification was sent")
			}
			l.awaitAcked(t)
			sent := time.Now()
			require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
			select {
			case <-p.Done:
			case <-time.After(30 * time.Second):
				t.Fatalf("vigil did not exit within 30 s of SIGTERM")
			}
			took := time.Since(sent)
			close(stop)
			ok := l.wait()
			t.Logf("exited %s after SIGTERM with %d notifications in flight", took.Round(time.Millisecond), len(inFlight)+1)
			require.Less(t, took, 25*time.Second)
			require.GreaterOrEqual(t, len(ok), loadAcked, "the load ran before SIGTERM")
			require.True(t, p.Cmd.ProcessState.Exited(), "exited, not killed")
			requireStored(t, dbURL, prj, ms, ok)
		})
	}
}
