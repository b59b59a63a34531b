package api

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// The settings of a monitor and the person fields are manage's rules,
// which the dashboard follows too.
var configFields = manage.ConfigFields

const pausedField = manage.PausedField

func personFieldNames() []string                { return manage.PersonFieldNames() }
func stateChanged(a, b *monitors.Monitor) bool  { return manage.StateChanged(a, b) }
func configChanged(a, b *monitors.Monitor) bool { return manage.ConfigChanged(a, b) }
func mergeFields(lists ...[]string) []string    { return manage.MergeFields(lists...) }

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
	if f.Description != nil {
		m.Description = *f.Description
		mark("description")
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
	if f.MinRuntimeSeconds != nil {
		m.MinRuntimeSeconds = *f.MinRuntimeSeconds
		mark("min_runtime_seconds")
	}
	if f.EarlySeconds != nil {
		m.EarlySeconds = *f.EarlySeconds
		mark("early_seconds")
	}
	if f.TooOften != nil {
		m.TooOften = monitors.TooOftenPolicy(*f.TooOften)
		mark("too_often")
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
	if f.DependsOn != nil {
		if err := noDuplicates(*f.DependsOn, join(path, "depends_on")); err != nil {
			return nil, err
		}
		m.DependsOn = slices.Clone(*f.DependsOn)
		mark("depends_on")
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
