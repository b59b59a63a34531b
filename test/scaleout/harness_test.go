package scaleout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
)

// need skips the test when what it needs is missing, or fails it when
// CI=true: CI must not pass by skipping.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required when CI=true)", what)
	}
	t.Skip(what)
}

// buildVigil builds ./cmd/vigil of the module in dir into the test's
// temporary directory.
func buildVigil(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "vigil")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/vigil")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build in %s:\n%s", dir, b)
	return out
}

// freePort returns a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// replica is one vigil serve process.
type replica struct {
	t      *testing.T
	name   string
	bin    string
	addr   string
	env    []string
	logDir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

func newReplica(t *testing.T, name, bin string, env []string) *replica {
	return &replica{t: t, name: name, bin: bin, addr: freePort(t), env: env, logDir: t.TempDir()}
}

// start starts the process and waits until /readyz answers 200; it
// returns what the process printed on its standard output by then.
func (r *replica) start() string {
	t := r.t
	t.Helper()
	r.mu.Lock()
	r.starts++
	out := filepath.Join(r.logDir, fmt.Sprintf("stdout.%d", r.starts))
	stdout, err := os.Create(out)
	require.NoError(t, err)
	stderr, err := os.Create(filepath.Join(r.logDir, fmt.Sprintf("stderr.%d", r.starts)))
	require.NoError(t, err)
	cmd := exec.Command(r.bin, "serve")
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, r.env...), "VIGIL_LISTEN="+r.addr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		stdout.Close()
		stderr.Close()
		close(exited)
	}()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited at start:\n%s", r.name, r.logTail())
		default:
		}
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 90s:\n%s", r.name, r.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	return string(b)
}

// kill sends SIGKILL and waits for the process to end.
func (r *replica) kill() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	require.NoError(r.t, cmd.Process.Signal(syscall.SIGKILL))
	<-exited
}

// term sends SIGTERM and returns how long the process took to exit, and
// its exit error.
func (r *replica) term() (time.Duration, error) {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	start := time.Now()
	require.NoError(r.t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-exited:
	case <-time.After(40 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return time.Since(start), errors.New("did not exit within 40s of SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		return time.Since(start), fmt.Errorf("exit status %d:\n%s", code, r.logTail())
	}
	return time.Since(start), nil
}

// logTail returns the end of the latest standard error.
func (r *replica) logTail() string {
	b, _ := os.ReadFile(filepath.Join(r.logDir, fmt.Sprintf("stderr.%d", r.starts)))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// nginxProxy runs Debian's nginx with deploy/nginx/vigil.conf, its
// upstream servers and listen address replaced by loopback ones.
func nginxProxy(t *testing.T, upstreams []string) string {
	t.Helper()
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/sbin/nginx"} {
			if _, serr := os.Stat(p); serr == nil {
				nginx, err = p, nil
			}
		}
	}
	need(t, err == nil, "nginx is not installed (apt-get install nginx)")
	need(t, os.Geteuid() == 0, "nginx is run as root here")
	site, err := os.ReadFile("../../deploy/nginx/vigil.conf")
	require.NoError(t, err)
	addr := freePort(t)
	servers := regexp.MustCompile(`(?m)^\s*server 10\.0\.0\.\d+:8080 (.*);\n`)
	opts := servers.FindStringSubmatch(string(site))
	require.NotNil(t, opts, "the upstream servers of deploy/nginx/vigil.conf")
	var ups strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&ups, "    server %s %s;\n", u, opts[1])
	}
	conf := servers.ReplaceAllString(string(site), "")
	conf = strings.Replace(conf, "upstream vigil {\n", "upstream vigil {\n"+ups.String(), 1)
	require.Contains(t, conf, "    listen 80;\n")
	conf = strings.Replace(conf, "    listen 80;\n", "    listen "+addr+";\n", 1)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vigil.conf"), []byte(conf), 0o644))
	main := fmt.Sprintf(`daemon off;
user root;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/vigil.conf;
}
`, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644))
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", b)
		}
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "nginx listens: %s", &out)
	return "http://" + addr
}

// notification is one webhook notification a receiver got.
type notification struct {
	channel    string
	event      string
	incidentID string
	monitorID  string
	deliveryID string
	at         time.Time
}

// receiver is the webhook receiver of every channel: the path names the
// channel.
type receiver struct {
	mu  sync.Mutex
	got []notification
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Event    string `json:"event"`
		Incident struct {
			ID string `json:"id"`
		} `json:"incident"`
		Monitor struct {
			ID string `json:"id"`
		} `json:"monitor"`
	}
	b, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(b, &p) != nil {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.got = append(rc.got, notification{channel: strings.TrimPrefix(r.URL.Path, "/"), event: p.Event,
		incidentID: p.Incident.ID, monitorID: p.Monitor.ID, deliveryID: r.Header.Get("Vigil-Delivery-Id"), at: time.Now()})
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) all() []notification {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]notification(nil), rc.got...)
}

// api calls the management API and decodes the answer into out.
func api(ctx context.Context, base, key, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, rb)
	}
	if out != nil {
		return json.Unmarshal(rb, out)
	}
	return nil
}
