package manage

import (
	"slices"

	"github.com/vigilhq/vigil/monitors"
)

// ConfigField is a monitor setting a person or a source sets: how to tell
// whether two monitors agree on it, and how to copy it from one to another.
type ConfigField struct {
	Name  string
	Equal func(a, b *monitors.Monitor) bool
	Copy  func(dst, src *monitors.Monitor)
	// state is set for fields the state machine judges by, whose change
	// calls for monitors.Reconfigure.
	State bool
}

// ConfigFields are the settings of a monitor, slug excepted: the slug
// names the monitor, in a source's declarations and in ping URLs.
var ConfigFields = []ConfigField{
	{Name: "name", Equal: func(a, b *monitors.Monitor) bool { return a.Name == b.Name },
		Copy: func(d, s *monitors.Monitor) { d.Name = s.Name }},
	{Name: "description", Equal: func(a, b *monitors.Monitor) bool { return a.Description == b.Description },
		Copy: func(d, s *monitors.Monitor) { d.Description = s.Description }},
	{Name: "tags", Equal: func(a, b *monitors.Monitor) bool { return slices.Equal(a.Tags, b.Tags) },
		Copy: func(d, s *monitors.Monitor) { d.Tags = slices.Clone(s.Tags) }},
	{Name: "schedule", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.Schedule == b.Schedule },
		Copy: func(d, s *monitors.Monitor) { d.Schedule = s.Schedule }},
	{Name: "grace_seconds", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.GraceSeconds == b.GraceSeconds },
		Copy: func(d, s *monitors.Monitor) { d.GraceSeconds = s.GraceSeconds }},
	{Name: "max_runtime_seconds", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.MaxRuntimeSeconds == b.MaxRuntimeSeconds },
		Copy: func(d, s *monitors.Monitor) { d.MaxRuntimeSeconds = s.MaxRuntimeSeconds }},
	{Name: "deadline_seconds", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.DeadlineSeconds == b.DeadlineSeconds },
		Copy: func(d, s *monitors.Monitor) { d.DeadlineSeconds = s.DeadlineSeconds }},
	{Name: "alert_on_failure", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.AlertOnFailure == b.AlertOnFailure },
		Copy: func(d, s *monitors.Monitor) { d.AlertOnFailure = s.AlertOnFailure }},
	{Name: "failure_threshold", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.FailureThreshold == b.FailureThreshold },
		Copy: func(d, s *monitors.Monitor) { d.FailureThreshold = s.FailureThreshold }},
	{Name: "recovery_threshold", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.RecoveryThreshold == b.RecoveryThreshold },
		Copy: func(d, s *monitors.Monitor) { d.RecoveryThreshold = s.RecoveryThreshold }},
	{Name: "overlap", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.Overlap == b.Overlap },
		Copy: func(d, s *monitors.Monitor) { d.Overlap = s.Overlap }},
	{Name: "min_runtime_seconds", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.MinRuntimeSeconds == b.MinRuntimeSeconds },
		Copy: func(d, s *monitors.Monitor) { d.MinRuntimeSeconds = s.MinRuntimeSeconds }},
	{Name: "early_seconds", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.EarlySeconds == b.EarlySeconds },
		Copy: func(d, s *monitors.Monitor) { d.EarlySeconds = s.EarlySeconds }},
	{Name: "too_often", State: true, Equal: func(a, b *monitors.Monitor) bool { return a.TooOften == b.TooOften },
		Copy: func(d, s *monitors.Monitor) { d.TooOften = s.TooOften }},
	{Name: "channels", Equal: func(a, b *monitors.Monitor) bool { return slices.Equal(a.Channels, b.Channels) },
		Copy: func(d, s *monitors.Monitor) { d.Channels = slices.Clone(s.Channels) }},
	{Name: "retry_policy", Equal: func(a, b *monitors.Monitor) bool { return retryPolicyEqual(a.RetryPolicy, b.RetryPolicy) },
		Copy: func(d, s *monitors.Monitor) { d.RetryPolicy = cloneRetryPolicy(s.RetryPolicy) }},
	{Name: "depends_on", Equal: func(a, b *monitors.Monitor) bool { return slices.Equal(a.DependsOn, b.DependsOn) },
		Copy: func(d, s *monitors.Monitor) { d.DependsOn = slices.Clone(s.DependsOn) }},
	{Name: "notify_output", Equal: func(a, b *monitors.Monitor) bool { return a.HideOutput == b.HideOutput },
		Copy: func(d, s *monitors.Monitor) { d.HideOutput = s.HideOutput }},
}

// PausedField is the person field of a pause or resume by a person.
const PausedField = "paused"

// PersonFieldNames are the names a person_fields list may hold.
func PersonFieldNames() []string {
	names := make([]string, 0, len(ConfigFields)+1)
	for _, f := range ConfigFields {
		names = append(names, f.Name)
	}
	return append(names, PausedField)
}

func retryPolicyEqual(a, b *monitors.RetryPolicy) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Name == b.Name && a.MaxRetries == b.MaxRetries && slices.Equal(a.MaxDelaysSeconds, b.MaxDelaysSeconds)
}

func cloneRetryPolicy(p *monitors.RetryPolicy) *monitors.RetryPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.MaxDelaysSeconds = slices.Clone(p.MaxDelaysSeconds)
	return &c
}

// StateChanged reports whether a and b differ in a field the state machine
// judges by.
func StateChanged(a, b *monitors.Monitor) bool {
	for _, f := range ConfigFields {
		if f.State && !f.Equal(a, b) {
			return true
		}
	}
	return false
}

// ConfigChanged reports whether a and b differ in any setting.
func ConfigChanged(a, b *monitors.Monitor) bool {
	for _, f := range ConfigFields {
		if !f.Equal(a, b) {
			return true
		}
	}
	return false
}

// ChangedFields names the settings that differ between a and b, in the
// order of ConfigFields.
func ChangedFields(a, b *monitors.Monitor) []string {
	var out []string
	for _, f := range ConfigFields {
		if !f.Equal(a, b) {
			out = append(out, f.Name)
		}
	}
	return out
}

// MergeFields returns the union of lists, sorted in the order of
// PersonFieldNames.
func MergeFields(lists ...[]string) []string {
	out := []string{}
	for _, name := range PersonFieldNames() {
		for _, l := range lists {
			if slices.Contains(l, name) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// without returns list without name.
func without(list []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == name })
}
