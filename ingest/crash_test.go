package ingest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
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
	bin := buildVigil(t)
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

func buildVigil(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(t.TempDir(), "vigil")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/vigil")
	cmd.Dir = root
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", b)
	return bin
}

// vigilProc is a running "vigil serve".
type vigilProc struct {
	cmd  *exec.Cmd
	addr string
	log  *syncBuffer
	done chan struct{} // closed when the process has exited
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`msg="vigil serving" addr=(\S+)`)

// startVigil starts the binary on dbURL, on a free port, and waits until it
// serves.
func startVigil(t *testing.T, bin, dbURL string) *vigilProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--database", dbURL, "--listen", "127.0.0.1:0",
		"--ping-rate-limit", "0", "--keep-pings", "10000000")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	p := &vigilProc{cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.log.WriteString(line + "\n")
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("vigil log:\n%s", p.log.String())
		}
	})
	select {
	case p.addr = <-addr:
	case <-p.done:
		t.Fatalf("vigil exited before serving:\n%s", p.log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("vigil did not start serving:\n%s", p.log.String())
	}
	return p
}

type acked struct {
	monitor int
	rid     string
}

func crashTest(t *testing.T, bin, dbURL string) {
	ctx := context.Background()
	store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
	require.NoError(t, err)
	prj := storetest.MustProject(t, store)
	var ms []*monitors.Monitor
	for i := range 16 {
		ms = append(ms, storetest.MustMonitor(t, store, prj.ID, fmt.Sprintf("job-%d", i), func(m *monitors.Monitor) {
			m.PingKey = keys.NewPingKey()
			m.Overlap = monitors.OverlapIgnore
		}))
	}
	require.NoError(t, store.Close())

	p := startVigil(t, bin, dbURL)

	// Drive pings from many connections; stop each worker at its first
	// failed request (the process is gone) or after a bound.
	const workers = 12
	var (
		mu      sync.Mutex
		ok      []acked
		refused int
		wg      sync.WaitGroup
	)
	loadStart := time.Now()
	for w := range workers {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			kinds := []string{"/start", "", "/log", "/fail", "/1"}
			for n := 0; time.Since(loadStart) < 20*time.Second; n++ {
				mi := (w + n) % len(ms)
				rid := fmt.Sprintf("w%d-%d", w, n)
				res, err := client.Get(fmt.Sprintf("http://%s/ping/%s%s?rid=%s", p.addr, ms[mi].PingKey, kinds[n%len(kinds)], rid))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				if res.StatusCode == http.StatusOK {
					ok = append(ok, acked{mi, rid})
				} else {
					refused++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(1500 * time.Millisecond) // the load runs; then the crash
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	wg.Wait()
	require.Greater(t, len(ok), 100, "the load ran before the crash")
	t.Logf("%d pings acknowledged before SIGKILL (%d refused)", len(ok), refused)

	// The restarted server finds every acknowledged ping, and takes more.
	p2 := startVigil(t, bin, dbURL)
	res, err := http.Get("http://" + p2.addr + "/ping/" + ms[0].PingKey + "?rid=after-restart")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, p2.cmd.Process.Signal(syscall.SIGTERM))
	<-p2.done

	store, err = server.OpenStore(ctx, dbURL, testdb.Logger(t))
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
	require.Empty(t, lost, "acknowledged pings lost in the crash")
	require.True(t, stored[0]["after-restart"])
	t.Logf("%d pings stored: every acknowledged one, and %d that were in flight at the crash", total, total-len(ok)-1)
}
