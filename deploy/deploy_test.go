package deploy_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/vigilhq/vigil/server"
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

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// containerBuild builds cmd/vigil with the environment and flags of the
// Containerfile's "go build" line, once per test run, and returns the
// binary's path.
func containerBuild(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildPath, buildErr = build()
	})
	require.NoError(t, buildErr)
	return buildPath
}

func build() (string, error) {
	cf, err := os.ReadFile("../Containerfile")
	if err != nil {
		return "", err
	}
	var line string
	for l := range strings.Lines(string(cf)) {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, " go build ") {
			line = strings.TrimSpace(strings.TrimPrefix(l, "RUN "))
		}
	}
	if line == "" {
		return "", errors.New("the Containerfile has no RUN ... go build line")
	}
	fields := strings.Fields(line)
	var env []string
	for len(fields) > 0 && strings.Contains(fields[0], "=") {
		env, fields = append(env, fields[0]), fields[1:]
	}
	if len(fields) < 2 || fields[0] != "go" || fields[1] != "build" {
		return "", errors.New("the Containerfile's build line is not VAR=... go build ...")
	}
	dir, err := os.MkdirTemp("", "vigil-container-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "vigil")
	args := fields[1:]
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New("go " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(b))
	}
	return out, nil
}

// TestContainerBinaryKeepsZones builds the binary as the Containerfile
// does, checks that it is static, and runs it in an empty root directory
// (no /usr/share/zoneinfo, no /etc, as in the scratch image) with no TZ:
// a cron schedule in Europe/Berlin must still follow that zone's daylight
// saving time.
func TestContainerBinaryKeepsZones(t *testing.T) {
	t.Parallel()
	bin := containerBuild(t)

	f, err := elf.Open(bin)
	require.NoError(t, err)
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "the binary is static: no dynamic loader")
	}
	require.NoError(t, f.Close())

	need(t, os.Geteuid() == 0, "chroot into an empty directory needs root")
	root := t.TempDir()
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "vigil"), b, 0o755))
	cmd := exec.Command("/vigil", "cron", "next", "0 9 * * *", "--tz", "Europe/Berlin", "--from", "2026-03-27T12:00:00Z", "-n", "3")
	cmd.Env = []string{} // no TZ, no ZONEINFO
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	require.Equal(t, "2026-03-28T09:00:00+01:00\n2026-03-29T09:00:00+02:00\n2026-03-30T09:00:00+02:00\n", stdout.String(),
		"Berlin's zone rules, from the binary itself")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the root held only the binary")
}

// TestSystemdUnit checks deploy/systemd/vigil.service with systemd-analyze:
// verify finds no problem (with ExecStart pointing at a built binary), and
// security rates its exposure at most 2.0.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("systemd-analyze")
	need(t, err == nil, "systemd-analyze is not installed")
	bin := containerBuild(t)
	unit, err := os.ReadFile("systemd/vigil.service")
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart=/usr/local/bin/vigil serve")
	dir := t.TempDir()
	path := filepath.Join(dir, "vigil.service")
	require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/vigil"), []byte(bin)), 0o644))

	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify has nothing to say")

	out, err = exec.Command("systemd-analyze", "security", "--offline=yes", "--threshold=20", "--no-pager", path).CombinedOutput()
	require.NoError(t, err, "exposure above 2.0:\n%s", out)
	require.Contains(t, string(out), "Overall exposure level for vigil.service")

	// Stopping waits longer than vigil serve's own shutdown.
	require.Contains(t, string(unit), "TimeoutStopSec=30s")
	require.Greater(t, 30*time.Second, server.ShutdownTimeoutDefault+5*time.Second)
}

// TestKubernetesManifests reads deploy/kubernetes and checks that the
// Deployment, Service and PodDisruptionBudget fit together and fit vigil
// serve: the probes are /readyz and /healthz, the grace period covers the
// preStop pause and the shutdown timeout, and the selectors match.
func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	type probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
	type manifest struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Replicas int `yaml:"replicas"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			MaxUnavailable int `yaml:"maxUnavailable"`
			Template       struct {
				Metadata struct {
					Labels map[string]string `yaml:"labels"`
				} `yaml:"metadata"`
				Spec struct {
					Grace      int `yaml:"terminationGracePeriodSeconds"`
					Containers []struct {
						Args      []string `yaml:"args"`
						Readiness probe    `yaml:"readinessProbe"`
						Liveness  probe    `yaml:"livenessProbe"`
						Lifecycle struct {
							PreStop struct {
								Sleep struct {
									Seconds int `yaml:"seconds"`
								} `yaml:"sleep"`
							} `yaml:"preStop"`
						} `yaml:"lifecycle"`
						Env []struct {
							Name  string `yaml:"name"`
							Value string `yaml:"value"`
						} `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	read := func(name string) manifest {
		b, err := os.ReadFile(filepath.Join("kubernetes", name))
		require.NoError(t, err)
		var m manifest
		require.NoError(t, yaml.Unmarshal(b, &m), name)
		return m
	}
	dep, svc, pdb := read("deployment.yaml"), read("service.yaml"), read("pdb.yaml")
	require.Equal(t, "Deployment", dep.Kind)
	require.Equal(t, "PodDisruptionBudget", pdb.Kind)
	require.Equal(t, "Service", svc.Kind)
	require.GreaterOrEqual(t, dep.Spec.Replicas, 2)
	require.Equal(t, 1, pdb.Spec.MaxUnavailable)
	labels := dep.Spec.Template.Metadata.Labels
	require.Equal(t, dep.Spec.Selector.MatchLabels, pdb.Spec.Selector.MatchLabels)
	for k, v := range dep.Spec.Selector.MatchLabels {
		require.Equal(t, v, labels[k], "the pods carry the selector's labels")
	}
	// A Service's selector is a plain map.
	var rawSvc struct {
		Spec struct {
			Selector map[string]string `yaml:"selector"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile("kubernetes/service.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &rawSvc))
	require.Equal(t, dep.Spec.Selector.MatchLabels, rawSvc.Spec.Selector)

	spec := dep.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	require.Equal(t, []string{"serve"}, c.Args)
	require.Equal(t, "/readyz", c.Readiness.HTTPGet.Path)
	require.Equal(t, "/healthz", c.Liveness.HTTPGet.Path)
	shutdown := server.ShutdownTimeoutDefault
	for _, e := range c.Env {
		if e.Name == "VIGIL_SHUTDOWN_TIMEOUT" {
			d, err := time.ParseDuration(e.Value)
			require.NoError(t, err)
			shutdown = d
		}
	}
	want := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds)*time.Second + shutdown + 5*time.Second
	require.GreaterOrEqual(t, time.Duration(spec.Grace)*time.Second, want,
		"the grace period covers the preStop pause, the shutdown timeout and the exit")
}
