package api

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"github.com/vigilhq/vigil/monitors"
)

// configField is a monitor setting a person or a source sets: how to tell
// whether two monitors agree on it, and how to copy it from one to another.
type configField struct {
	name  string
	equal func(a, b *monitors.Monitor) bool
	copy  func(dst, src *monitors.Monitor)
	// state is set for fields the state machine judges by, whose change
	// calls for monitors.Reconfigure.
	state bool
}

// configFields are the settings of a monitor, slug excepted: the slug
// names the monitor, in a source's declarations and in ping URLs.
var configFields = []configField{
	{name: "name", equal: func(a, b *monitors.Monitor) bool { return a.Name == b.Name },
		copy: func(d, s *monitors.Monitor) { d.Name = s.Name }},
	{name: "tags", equal: func(a, b *monitors.Monitor) bool { return slices.Equal(a.Tags, b.Tags) },
		copy: func(d, s *monitors.Monitor) { d.Tags = slices.Clone(s.Tags) }},
	{name: "schedule", state: true, equal: func(a, b *monitors.Monitor) bool { return a.Schedule == b.Schedule },
		copy: func(d, s *monitors.Monitor) { d.Schedule = s.Schedule }},
	{name: "grace_seconds", state: true, equal: func(a, b *monitors.Monitor) bool { return a.GraceSeconds == b.GraceSeconds },
		copy: func(d, s *monitors.Monitor) { d.GraceSeconds = s.GraceSeconds }},
	{name: "max_runtime_seconds", state: true, equal: func(a, b *monitors.Monitor) bool { return a.MaxRuntimeSeconds == b.MaxRuntimeSeconds },
		copy: func(d, s *monitors.Monitor) { d.MaxRuntimeSeconds = s.MaxRuntimeSeconds }},
	{name: "deadline_seconds", state: true, equal: func(a, b *monitors.Monitor) bool { return a.DeadlineSeconds == b.DeadlineSeconds },
		copy: func(d, s *monitors.Monitor) { d.DeadlineSeconds = s.DeadlineSeconds }},
	{name: "alert_on_failure", state: true, equal: func(a, b *monitors.Monitor) bool { return a.AlertOnFailure == b.AlertOnFailure },
		copy: func(d, s *monitors.Monitor) { d.AlertOnFailure = s.AlertOnFailure }},
	{name: "failure_threshold", state: true, equal: func(a, b *monitors.Monitor) bool { return a.FailureThreshold == b.FailureThreshold },
		copy: func(d, s *monitors.Monitor) { d.FailureThreshold = s.FailureThreshold }},
	{name: "recovery_threshold", state: true, equal: func(a, b *monitors.Monitor) bool { return a.RecoveryThreshold == b.RecoveryThreshold },
		copy: func(d, s *monitors.Monitor) { d.RecoveryThreshold = s.RecoveryThreshold }},
	{name: "overlap", state: true, equal: func(a, b *monitors.Monitor) bool { return a.Overlap == b.Overlap },
		copy: func(d, s *monitors.Monitor) { d.Overlap = s.Overlap }},
	{name: "channels", equal: func(a, b *monitors.Monitor) bool { return slices.Equal(a.Channels, b.Channels) },
		copy: func(d, s *monitors.Monitor) { d.Channels = slices.Clone(s.Channels) }},
	{name: "retry_policy", equal: func(a, b *monitors.Monitor) bool { return retryPolicyEqual(a.RetryPolicy, b.RetryPolicy) },
		copy: func(d, s *monitors.Monitor) { d.RetryPolicy = cloneRetryPolicy(s.RetryPolicy) }},
	{name: "notify_output", equal: func(a, b *monitors.Monitor) bool { return a.HideOutput == b.HideOutput },
		copy: func(d, s *monitors.Monitor) { d.HideOutput = s.HideOutput }},
}

// pausedField is the person field of a pause or resume by a person.
const pausedField = "paused"

// personFieldNames are the names a person_fields list may hold.
func personFieldNames() []string {
	names := make([]string, 0, len(configFields)+1)
	for _, f := range configFields {
		names = append(names, f.name)
	}
	return append(names, pausedField)
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

// stateChanged reports whether a and b differ in a field the state machine
// judges by.
func stateChanged(a, b *monitors.Monitor) bool {
	for _, f := range configFields {
		if f.state && !f.equal(a, b) {
			return true
		}
	}
	return false
}

// configChanged reports whether a and b differ in any setting.
func configChanged(a, b *monitors.Monitor) bool {
	for _, f := range configFields {
		if !f.equal(a, b) {
			return true
		}
	}
	return false
}

// applyFields sets the fields f has (and obj, as received, names) on m,
// prefixing error fields with path. It returns the JSON names of the
// settings it set.
func applyFields(m *monitors.Monitor, f *MonitorFields, obj object, path string) ([]string, error) {
	for _, name := range sortedKeys(obj) {
		if obj.isNull(name) && name != "retry_policy" {
			return nil, invalidf(join(path, name), "must not be null")
		}
	}
	var set []string
	mark := func(name string) { set = append(set, name) }
	if f.Name != nil {
		m.Name = strings.TrimSpace(*f.Name)
		if m.Name == "" {
			return nil, invalidf(join(path, "name"), "must not be empty")
		}
		mark("name")
	}
	if f.Slug != nil {
		m.Slug = *f.Slug
	}
	if f.Tags != nil {
		if err := noDuplicates(*f.Tags, join(path, "tags")); err != nil {
			return nil, err
		}
		m.Tags = slices.Clone(*f.Tags)
		mark("tags")
	}
	if f.Schedule != nil {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleKind(f.Schedule.Kind), Expr: f.Schedule.Expr,
			TZ: f.Schedule.TZ, EverySeconds: f.Schedule.EverySeconds,
			Dialect: monitors.Dialect(f.Schedule.Dialect)}.WithDefaults()
		mark("schedule")
	}
	if f.GraceSeconds != nil {
		m.GraceSeconds = *f.GraceSeconds
		mark("grace_seconds")
	}
	if f.MaxRuntimeSeconds != nil {
		m.MaxRuntimeSeconds = *f.MaxRuntimeSeconds
		mark("max_runtime_seconds")
	}
	if f.DeadlineSeconds != nil {
		m.DeadlineSeconds = *f.DeadlineSeconds
		mark("deadline_seconds")
	}
	if f.AlertOnFailure != nil {
		m.AlertOnFailure = monitors.AlertOnFailure(*f.AlertOnFailure)
		mark("alert_on_failure")
	}
	if f.FailureThreshold != nil {
		m.FailureThreshold = *f.FailureThreshold
		mark("failure_threshold")
	}
	if f.RecoveryThreshold != nil {
		m.RecoveryThreshold = *f.RecoveryThreshold
		mark("recovery_threshold")
	}
	if f.Overlap != nil {
		m.Overlap = monitors.OverlapPolicy(*f.Overlap)
		mark("overlap")
	}
	if f.Channels != nil {
		if err := noDuplicates(*f.Channels, join(path, "channels")); err != nil {
			return nil, err
		}
		m.Channels = slices.Clone(*f.Channels)
		mark("channels")
	}
	if f.NotifyOutput != nil {
		m.HideOutput = !*f.NotifyOutput
		mark("notify_output")
	}
	if obj.has("retry_policy") {
		m.RetryPolicy = nil
		if p := f.RetryPolicy; p != nil {
			m.RetryPolicy = &monitors.RetryPolicy{Name: p.Name, MaxRetries: p.MaxRetries,
				MaxDelaysSeconds: slices.Clone(p.MaxDelaysSeconds)}
			if m.RetryPolicy.MaxDelaysSeconds == nil {
				m.RetryPolicy.MaxDelaysSeconds = []int64{}
			}
		}
		mark("retry_policy")
	}
	return set, nil
}

// newMonitor returns a monitor with the default settings, to apply a
// request's fields on: a field the request sets is then validated as sent,
// a zero included.
func newMonitor(projectID string) *monitors.Monitor {
	m := &monitors.Monitor{ProjectID: projectID}
	m.ApplyDefaults()
	m.Name, m.Slug = "", ""
	return m
}

// finishNew derives what a new monitor's request left out: the slug from
// the name, the name from the slug, and the first status.
func finishNew(m *monitors.Monitor) {
	if m.Slug == "" {
		m.Slug = monitors.Slugify(m.Name)
	}
	if m.Name == "" {
		m.Name = m.Slug
	}
	m.State = monitors.State{Status: monitors.StatusNew}
	if m.Paused {
		m.State.Status = monitors.StatusPaused
	}
}

// validateMonitor runs monitors' validation, with fields under path.
func validateMonitor(m *monitors.Monitor, path string) error {
	if err := m.Validate(); err != nil {
		return underPath(err, path)
	}
	return nil
}

// underPath prefixes the field of a validation error with path.
func underPath(err error, path string) error {
	if path == "" {
		return err
	}
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		return invalidf(join(path, ve.Field), "%s", ve.Message)
	}
	var ae *apiError
	if errors.As(err, &ae) && ae.field != "" {
		return &apiError{status: ae.status, field: join(path, ae.field), msg: ae.msg}
	}
	return err
}

func noDuplicates(list []string, field string) error {
	seen := make(map[string]bool, len(list))
	for _, v := range list {
		if seen[v] {
			return invalidf(field, "%q is listed twice", v)
		}
		seen[v] = true
	}
	return nil
}

// readOnlyFields lists the fields of a resource type that a request body
// does not set, given the type of that body.
func readOnlyFields(resource, body any) []string {
	settable := jsonFields(reflect.TypeOf(body))
	var out []string
	for _, name := range fieldNames(reflect.TypeOf(resource)) {
		if _, ok := settable[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// checkPersonFields validates a person_fields list.
func checkPersonFields(list []string) error {
	names := personFieldNames()
	for _, v := range list {
		if !slices.Contains(names, v) {
			return invalidf("person_fields", "%q is not a setting a person can hold (one of %s)", v, strings.Join(names, ", "))
		}
	}
	return noDuplicates(list, "person_fields")
}

// mergeFields returns the union of lists, sorted in the order of
// personFieldNames.
func mergeFields(lists ...[]string) []string {
	out := []string{}
	for _, name := range personFieldNames() {
		for _, l := range lists {
			if slices.Contains(l, name) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func without(list []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == name })
}
