// Package vigilproc builds the real vigil binary inside a test and runs
// "vigil serve" as a process of its own, so that tests can kill it with
// SIGKILL or stop it with SIGTERM, as an operator or a crash would.
package vigilproc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
)

// Build compiles ./cmd/vigil into a temporary directory and returns its
// path.
func Build(t testing.TB) string {
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

// Proc is a running "vigil serve".
type Proc struct {
	Cmd *exec.Cmd
	// Addr is the address it serves on.
	Addr string
	// Log is everything it wrote to standard error.
	Log *SyncBuffer
	// Done is closed when the process has exited.
	Done chan struct{}
}

// SyncBuffer is a string builder safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// WriteString appends v.
func (s *SyncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`msg="vigil serving" addr=(\S+)`)

// Start starts bin serve on dbURL, on a free port of 127.0.0.1, without
// ping rate limits and keeping every ping, with the extra environment
// variables env ("VIGIL_X=y"), and waits until it serves. The process is
// killed when the test ends, and its log shown if the test failed.
func Start(t testing.TB, bin, dbURL string, env ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--database", dbURL, "--listen", "127.0.0.1:0",
		"--ping-rate-limit", "0", "--keep-pings", "10000000")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	if key := testdb.KeyFile(dbURL); key != "" {
		cmd.Env = append(cmd.Env, "VIGIL_SECRET_KEY_FILE="+key) // PostgreSQL needs one
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	p := &Proc{Cmd: cmd, Log: &SyncBuffer{}, Done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.Log.WriteString(line + "\n")
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.Done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.Done
		if t.Failed() {
			t.Logf("vigil log:\n%s", p.Log.String())
		}
	})
	select {
	case p.Addr = <-addr:
	case <-p.Done:
		t.Fatalf("vigil exited before serving:\n%s", p.Log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("vigil did not start serving:\n%s", p.Log.String())
	}
	return p
}
