// Package kubernetes_test checks the CronJob example of this folder: that
// it fits together, and that its command does what the README says when
// run against a real Vigil.
package kubernetes_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/internal/vigilproc"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type cronJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Schedule          string `yaml:"schedule"`
		TimeZone          string `yaml:"timeZone"`
		ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
		JobTemplate       struct {
			Spec struct {
				BackoffLimit *int `yaml:"backoffLimit"`
				Template     struct {
					Spec struct {
						RestartPolicy string `yaml:"restartPolicy"`
						Grace         int    `yaml:"terminationGracePeriodSeconds"`
						Containers    []struct {
							Command []string `yaml:"command"`
							Args    []string `yaml:"args"`
							Env     []envVar `yaml:"env"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

func readCronJob(t *testing.T) *cronJob {
	t.Helper()
	b, err := os.ReadFile("cronjob.yaml")
	require.NoError(t, err)
	var cj cronJob
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(false)
	require.NoError(t, dec.Decode(&cj))
	return &cj
}

// env returns the container's environment by name.
func (cj *cronJob) env() map[string]envVar {
	out := map[string]envVar{}
	for _, e := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

// TestCronJobFitsTogether checks that the example wraps its command with
// vigil run and gives vigil run the CronJob's own name, schedule and zone,
// in the robfig dialect.
func TestCronJobFitsTogether(t *testing.T) {
	t.Parallel()
	cj := readCronJob(t)
	require.Equal(t, "batch/v1", cj.APIVersion)
	require.Equal(t, "CronJob", cj.Kind)
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.Equal(t, []string{"/usr/local/bin/vigil", "run", "--"}, c.Command, "vigil run is the entrypoint; the command is in args")
	require.NotEmpty(t, c.Args)

	env := cj.env()
	require.Equal(t, cj.Metadata.Name, env["VIGIL_SLUG"].Value, "the monitor is named as the CronJob")
	require.Equal(t, cj.Spec.Schedule, env["VIGIL_SCHEDULE"].Value, "the CronJob's own schedule")
	require.NotEmpty(t, cj.Spec.TimeZone)
	require.Equal(t, cj.Spec.TimeZone, env["VIGIL_TZ"].Value, "the CronJob's own zone")
	require.Equal(t, "robfig", env["VIGIL_DIALECT"].Value, "the CronJob controller reads schedules as robfig/cron does")
	require.Equal(t, "true", env["VIGIL_CREATE"].Value)
	require.NotEmpty(t, env["VIGIL_URL"].Value)
	ref := env["VIGIL_PROJECT_PING_KEY"].ValueFrom
	require.NotNil(t, ref, "the project ping key comes from a Secret")
	require.NotNil(t, ref.SecretKeyRef)
	_, inline := env["VIGIL_PING_KEY"]
	require.False(t, inline)

	require.Equal(t, "Never", pod.RestartPolicy)
	require.NotNil(t, cj.Spec.JobTemplate.Spec.BackoffLimit)
	require.Equal(t, 0, *cj.Spec.JobTemplate.Spec.BackoffLimit)
	require.Equal(t, "Forbid", cj.Spec.ConcurrencyPolicy)

	// After SIGTERM the kubelet waits the grace period: long enough for
	// vigil run's cancel ping, tried 1 + retries times.
	timeout, err := time.ParseDuration(env["VIGIL_TIMEOUT"].Value)
	require.NoError(t, err)
	retries, err := strconv.Atoi(env["VIGIL_RETRIES"].Value)
	require.NoError(t, err)
	require.Greater(t, time.Duration(pod.Grace)*time.Second, timeout*time.Duration(1+retries)+10*time.Second)
}

// TestCronJobCommandAgainstVigil runs the example's container command (the
// built vigil binary, with the manifest's environment, wrapping a stand-in
// for the job) against a real Vigil: the first run creates the monitor
// with the CronJob's schedule, and a SIGTERM to vigil run, as the kubelet
// sends to PID 1, makes the run cancelled.
func TestCronJobCommandAgainstVigil(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCronJobCommand(t, db(t))
		})
	}
}

func testCronJobCommand(t *testing.T, dbURL string) {
	cj := readCronJob(t)
	bin := vigilproc.Build(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, server.Config{DatabaseURL: dbURL, Listen: "127.0.0.1:0", LogLevel: "warn",
		LogFormat: "text", KeepPings: 1000, KeepRuns: 1000, PruneInterval: time.Hour, SecretKeyFile: testdb.KeyFile(dbURL)}, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	store, project := srv.Store(), srv.Bootstrapped.Project

	// The pod's environment: the manifest's values, with this Vigil's URL
	// and the Secret's key.
	podEnv := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env {
		v := e.Value
		switch e.Name {
		case "VIGIL_URL":
			v = "http://" + srv.Addr()
		case "VIGIL_PROJECT_PING_KEY":
			v = project.PingKey
		}
		podEnv = append(podEnv, e.Name+"="+v)
	}
	command := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command
	pod := func(script string) *exec.Cmd {
		args := append(append([]string{}, command[1:]...), "/bin/sh", "-c", script)
		cmd := exec.Command(bin, args...)
		cmd.Env = podEnv
		return cmd
	}

	// The first run creates the monitor with the CronJob's schedule.
	out, err := pod("echo imported 42 rows").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "imported 42 rows\n", string(out))
	m, err := store.MonitorGetBySlug(context.Background(), project.ID, cj.Metadata.Name)
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: cj.Spec.Schedule, TZ: cj.Spec.TimeZone,
		Dialect: monitors.DialectRobfig}, m.Schedule)
	require.Equal(t, int64(600), m.GraceSeconds)
	require.Equal(t, int64(7200), m.MaxRuntimeSeconds)

	// The pod is terminated mid-run: SIGTERM to vigil run (PID 1), which
	// passes it on; the run is cancelled, and no one is alerted.
	cmd := pod("echo started; exec sleep 60")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 128+int(syscall.SIGTERM), exit.ExitCode(), "vigil run exits as the command did: killed by SIGTERM")

	ps, err := store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: project.ID, MonitorID: m.ID})
	require.NoError(t, err)
	require.Len(t, ps, 4)
	require.Equal(t, monitors.PingCancel, ps[0].Kind, "the terminated run sent /cancel")
	require.Equal(t, monitors.PingStart, ps[1].Kind)
	require.Equal(t, ps[1].RID, ps[0].RID)
	runs, err := store.RunList(context.Background(), &monitors.HistoryListParams{ProjectID: project.ID, MonitorID: m.ID})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	require.Equal(t, monitors.RunCancelled, runs[0].Outcome)
	require.Equal(t, monitors.RunSucceeded, runs[1].Outcome)
	got, err := store.MonitorGet(context.Background(), project.ID, m.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.StatusUp, got.State.Status, "a cancelled run alerts no one")
	require.Equal(t, m.Schedule, got.Schedule)
}
