package sdk

import (
	"time"

	"github.com/vigilhq/vigil/sdk/retry"
)

// Job describes a scheduled job to the scheduler integrations (cronwrap,
// gocronwrap, riverwrap): the monitor to declare for it and how its runs are
// reported. The schedule comes from the integration.
type Job struct {
	// Slug identifies the job's monitor within its source; required unless
	// NoMonitor.
	Slug string
	// Name is shown in Vigil (default: Slug).
	Name string
	Tags []string
	// Grace is how late a run may start before it counts as missed.
	Grace time.Duration
	// MaxRuntime is how long a run may take before it counts as stuck.
	MaxRuntime time.Duration
	// RuntimeLimit also makes MaxRuntime the job's context deadline.
	RuntimeLimit bool
	// MinRuntime is the least a successful run may take: one that succeeds
	// quicker opens a too_fast incident (a backup that "succeeds" in 2 s
	// backed up nothing). Zero: off. It must be less than MaxRuntime (or
	// Grace, when MaxRuntime is zero).
	MinRuntime time.Duration
	// Early is how long before its scheduled time a run may start; one
	// that starts earlier opens an early incident. Zero: off. Cron
	// schedules only: Vigil refuses it on an interval.
	Early time.Duration
	// TooOften is alert or ignore (Vigil's default): whether a second
	// success for one occurrence opens a too_often incident. Retries never
	// count.
	TooOften string
	// Deadline is how long after its scheduled time an occurrence must have
	// succeeded, however many retries it takes.
	Deadline time.Duration
	// RetryPolicy is how failed runs are retried; it is declared, and each
	// retried failure is reported with its retry delay.
	RetryPolicy retry.Policy
	// AlertOnFailure is final (Vigil's default), every_attempt or never.
	AlertOnFailure string
	// Overlap is alert or ignore.
	Overlap  string
	Channels []string
	// HideOutput keeps the tail of a failing run's output (the failing
	// ping's body) out of the monitor's notifications (notify_output:
	// false), for jobs whose output may hold secrets.
	HideOutput bool
	// DependsOn names the monitors this job depends on, by slug (those of
	// the same declaration, or any monitor of the project) or ID: while
	// one of them has an open incident, this job's new incidents are
	// suppressed under it, and notified only if still open when it
	// recovers. No cycles: Vigil refuses the declaration naming one.
	DependsOn []string
	// NoMonitor opts the job out: it runs, but is neither declared nor
	// reported.
	NoMonitor bool
}

// Spec is the monitor to declare for j with schedule.
func (j Job) Spec(schedule *Schedule) MonitorSpec {
	name := j.Name
	if name == "" {
		name = j.Slug
	}
	var notifyOutput *bool
	if j.HideOutput {
		notifyOutput = new(bool)
	}
	return MonitorSpec{
		Name: name, Slug: j.Slug, Tags: j.Tags, Schedule: schedule, NotifyOutput: notifyOutput,
		GraceSeconds:      ceilSeconds(j.Grace),
		MaxRuntimeSeconds: ceilSeconds(j.MaxRuntime),
		MinRuntimeSeconds: ceilSeconds(j.MinRuntime),
		EarlySeconds:      ceilSeconds(j.Early),
		TooOften:          j.TooOften,
		DeadlineSeconds:   ceilSeconds(j.Deadline),
		AlertOnFailure:    j.AlertOnFailure,
		Overlap:           j.Overlap,
		Channels:          j.Channels,
		RetryPolicy:       RetrySpec(j.RetryPolicy),
		DependsOn:         j.DependsOn,
	}
}

// RunOptions are the options of [Client.Run] that j asks for: its retry
// policy and, with RuntimeLimit, its max runtime as a context deadline.
func (j Job) RunOptions() []RunOption {
	var opts []RunOption
	if j.RetryPolicy != nil {
		opts = append(opts, WithRetryPolicy(j.RetryPolicy))
	}
	if j.RuntimeLimit && j.MaxRuntime > 0 {
		opts = append(opts, WithRuntimeLimit(j.MaxRuntime))
	}
	return opts
}
