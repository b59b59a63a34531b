package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// monitorForm is the create and edit form of a monitor, as typed.
type monitorForm struct {
	ID                             string // empty for a new monitor
	Name, Slug, Tags               string
	Kind, Expr, TZ, Every, Dialect string
	Grace, MaxRuntime, Deadline    string
	AlertOnFailure, Overlap        string
	// MinRuntime, Early and TooOften are the run rules: durations as
	// typed, and too_often's choice.
	MinRuntime, Early, TooOften         string
	FailureThreshold, RecoveryThreshold string
	Channels                            []string
	// NotifyOutput is the notify_output checkbox.
	NotifyOutput bool
	AllChannels  []*monitors.Channel
	// DependsOn are the IDs of the monitors it depends on; AllMonitors
	// the others of the project, to choose from.
	DependsOn   []string
	AllMonitors []*monitors.Monitor
	Source      string
	// Errors are by form field name.
	Errors  map[string]string
	Preview *previewData
	Zones   []string
}

// Fields lists the form's errors in form order, for the summary at the top.
func (f *monitorForm) ErrorList() []string {
	var out []string
	for _, k := range []string{"name", "slug", "tags", "schedule_kind", "dialect", "expr", "tz", "every", "grace", "max_runtime",
		"deadline", "alert_on_failure", "failure_threshold", "recovery_threshold", "overlap", "min_runtime", "early", "too_often", "channels", "depends_on", "form"} {
		if e, ok := f.Errors[k]; ok {
			out = append(out, e)
		}
	}
	return out
}

func formFromMonitor(m *monitors.Monitor) *monitorForm {
	f := &monitorForm{ID: m.ID, Name: m.Name, Slug: m.Slug, Tags: strings.Join(m.Tags, " "),
		Kind: string(m.Schedule.Kind), Expr: m.Schedule.Expr, TZ: m.Schedule.TZ,
		Dialect: string(m.Schedule.WithDefaults().Dialect), // "" but for cron
		Every:   formDuration(m.Schedule.EverySeconds), Grace: formDuration(m.GraceSeconds),
		MaxRuntime: formDuration(m.MaxRuntimeSeconds), Deadline: formDuration(m.DeadlineSeconds),
		AlertOnFailure: string(m.AlertOnFailure), Overlap: string(m.Overlap),
		MinRuntime: formDuration(m.MinRuntimeSeconds), Early: formDuration(m.EarlySeconds), TooOften: string(m.TooOften),
		FailureThreshold: strconv.Itoa(m.FailureThreshold), RecoveryThreshold: strconv.Itoa(m.RecoveryThreshold),
		Channels: m.Channels, NotifyOutput: !m.HideOutput, Source: m.Source, DependsOn: m.DependsOn, Errors: map[string]string{}}
	if f.Kind == string(monitors.ScheduleInterval) {
		f.TZ = ""
	}
	return f
}

func formFromRequest(c echo.Context) (*monitorForm, error) {
	if _, err := c.FormParams(); err != nil {
		return nil, echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
	}
	f := &monitorForm{
		Name: strings.TrimSpace(c.FormValue("name")), Slug: strings.TrimSpace(c.FormValue("slug")),
		Tags: c.FormValue("tags"), Kind: c.FormValue("schedule_kind"), Expr: strings.TrimSpace(c.FormValue("expr")),
		TZ: strings.TrimSpace(c.FormValue("tz")), Every: c.FormValue("every"), Dialect: c.FormValue("dialect"),
		Grace:      c.FormValue("grace"),
		MaxRuntime: c.FormValue("max_runtime"), Deadline: c.FormValue("deadline"),
		AlertOnFailure: c.FormValue("alert_on_failure"), Overlap: c.FormValue("overlap"),
		MinRuntime: c.FormValue("min_runtime"), Early: c.FormValue("early"), TooOften: c.FormValue("too_often"),
		FailureThreshold: c.FormValue("failure_threshold"), RecoveryThreshold: c.FormValue("recovery_threshold"),
		NotifyOutput: c.FormValue("notify_output") != "",
		Errors:       map[string]string{},
	}
	params, _ := c.FormParams()
	f.Channels = params["channels"]
	f.DependsOn = params["depends_on"]
	return f, nil
}

// apply writes the form into m, and records what cannot be read.
func (f *monitorForm) apply(m *monitors.Monitor, channels []*monitors.Channel) {
	m.Name, m.Slug = f.Name, f.Slug
	if m.Slug == "" {
		m.Slug = monitors.Slugify(m.Name)
	}
	m.Tags = splitTags(f.Tags)
	switch monitors.ScheduleKind(f.Kind) {
	case monitors.ScheduleCron:
		tz := f.TZ
		if tz == "" {
			tz = "UTC"
		}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: f.Expr, TZ: tz,
			Dialect: monitors.Dialect(f.Dialect)}.WithDefaults()
		if _, err := monitors.ValidateSchedule(m.Schedule); err != nil {
			f.fieldError(err)
		}
	case monitors.ScheduleOnCalendar:
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: f.Expr, TZ: f.TZ}.WithDefaults()
		if _, err := monitors.ValidateSchedule(m.Schedule); err != nil {
			f.fieldError(err)
		}
	case monitors.ScheduleInterval:
		every, err := parseFormDuration(f.Every)
		if err != nil {
			f.Errors["every"] = "Interval: " + err.Error() + "."
		} else if every == 0 {
			f.Errors["every"] = "Interval: enter how often the job runs, such as 5m, 1h or 1d."
		}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: every}
	default:
		f.Errors["schedule_kind"] = "Schedule: choose a cron expression, an interval or a systemd timer."
	}
	dur := func(field, label, text string, p *int64) {
		n, err := parseFormDuration(text)
		if err != nil {
			f.Errors[field] = label + ": " + err.Error() + "."
			return
		}
		*p = n
	}
	dur("grace", "Grace period", f.Grace, &m.GraceSeconds)
	if m.GraceSeconds == 0 && f.Errors["grace"] == "" {
		m.GraceSeconds = monitors.GraceSecondsDefault
	}
	dur("max_runtime", "Max runtime", f.MaxRuntime, &m.MaxRuntimeSeconds)
	dur("deadline", "Deadline", f.Deadline, &m.DeadlineSeconds)
	m.AlertOnFailure = monitors.AlertOnFailure(f.AlertOnFailure)
	m.Overlap = monitors.OverlapPolicy(f.Overlap)
	dur("min_runtime", "Min runtime", f.MinRuntime, &m.MinRuntimeSeconds)
	dur("early", "Early", f.Early, &m.EarlySeconds)
	m.TooOften = monitors.TooOftenPolicy(cmp.Or(f.TooOften, string(monitors.TooOftenIgnore)))
	m.HideOutput = !f.NotifyOutput
	num := func(field, label, text string, p *int) {
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			f.Errors[field] = fmt.Sprintf("%s: %q is not a whole number.", label, text)
			return
		}
		*p = n
	}
	num("failure_threshold", "Failure threshold", f.FailureThreshold, &m.FailureThreshold)
	num("recovery_threshold", "Recovery threshold", f.RecoveryThreshold, &m.RecoveryThreshold)
	m.DependsOn = append([]string{}, f.DependsOn...)
	m.Channels = []string{}
	for _, id := range f.Channels {
		if !slices.ContainsFunc(channels, func(ch *monitors.Channel) bool { return ch.ID == id }) {
			f.Errors["channels"] = "Channels: one of the chosen channels no longer exists; choose again."
			continue
		}
		m.Channels = append(m.Channels, id)
	}
}

// validate checks m as the store will, plus that a cron schedule fires at
// all, and records the problems by form field.
func (f *monitorForm) validate(m *monitors.Monitor, now time.Time) {
	if len(f.Errors) > 0 {
		return
	}
	m.ApplyDefaults()
	if err := m.Validate(); err != nil {
		f.fieldError(err)
		return
	}
	if sched, err := monitors.ParseSchedule(m.Schedule); err == nil && sched.Next(now).IsZero() {
		f.Errors["expr"] = neverFires(m.Schedule.Kind)
	}
}

// fieldError records err under the form field it names.
func (f *monitorForm) fieldError(err error) {
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		field, _ := formField(ve.Field, f.Kind)
		f.Errors[field] = validationText(err, f.Kind)
		return
	}
	f.Errors["form"] = err.Error()
}

// exprLabel names the expression field for a kind of schedule: the one
// field holds a cron expression or a systemd calendar expression.
func exprLabel(kind string) string {
	if monitors.ScheduleKind(kind) == monitors.ScheduleOnCalendar {
		return "Calendar expression"
	}
	return "Cron expression"
}

// neverFires is the error of an expression that parses but has no next
// fire time (or elapse, as systemd says).
func neverFires(kind monitors.ScheduleKind) string {
	if kind == monitors.ScheduleOnCalendar {
		return exprLabel(string(kind)) + ": it never elapses."
	}
	return exprLabel(string(kind)) + ": it never fires."
}

// formField maps a ValidationError's field to the form's field and label,
// for a form whose schedule is of kind.
func formField(field, kind string) (string, string) {
	switch field {
	case "schedule.expr":
		return "expr", exprLabel(kind)
	case "schedule.tz":
		return "tz", "Time zone"
	case "schedule.dialect":
		return "dialect", "Scheduler"
	case "schedule.every_seconds":
		return "every", "Interval"
	case "schedule.kind":
		return "schedule_kind", "Schedule"
	case "grace_seconds":
		return "grace", "Grace period"
	case "max_runtime_seconds":
		return "max_runtime", "Max runtime"
	case "deadline_seconds":
		return "deadline", "Deadline"
	case "failure_threshold":
		return "failure_threshold", "Failure threshold"
	case "recovery_threshold":
		return "recovery_threshold", "Recovery threshold"
	case "alert_on_failure":
		return "alert_on_failure", "Alert on failure"
	case "min_runtime_seconds":
		return "min_runtime", "Min runtime"
	case "early_seconds":
		return "early", "Early"
	case "too_often":
		return "too_often", "Too often"
	case "name", "slug", "tags", "overlap", "channels":
		return field, capitalize(field)
	case "depends_on":
		return "depends_on", "Depends on"
	}
	return "form", capitalize(strings.ReplaceAll(field, "_", " "))
}

func splitTags(s string) []string {
	tags := []string{}
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

func (h *Handler) renderMonitorForm(c echo.Context, status int, v *viewer, f *monitorForm) error {
	channels, err := h.store.ChannelList(c.Request().Context(), &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return err
	}
	f.AllChannels = channels
	ms, err := h.store.MonitorList(c.Request().Context(), &monitors.MonitorListParams{ProjectID: v.Project.ID})
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.ID != f.ID {
			f.AllMonitors = append(f.AllMonitors, m)
		}
	}
	f.Zones = commonZones
	f.Preview = preview(f, v.Now)
	title := "New monitor"
	if f.ID != "" {
		title = "Edit " + f.Name
	}
	return h.render(c, status, "monitor_form", &page{Title: title, Nav: "monitors", V: v, Data: f})
}

func (h *Handler) monitorNew(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	f := formFromMonitor(&monitors.Monitor{
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: v.Loc.String()},
	})
	f.Grace, f.FailureThreshold, f.RecoveryThreshold = "5m", "1", "1"
	f.AlertOnFailure, f.Overlap = string(monitors.AlertFinal), string(monitors.OverlapAlert)
	f.TooOften = string(monitors.TooOftenIgnore)
	return h.renderMonitorForm(c, http.StatusOK, v, f)
}

func (h *Handler) monitorCreate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ctx := c.Request().Context()
	f, err := formFromRequest(c)
	if err != nil {
		return err
	}
	channels, err := h.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return err
	}
	now := h.now()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: v.Project.ID, PingKey: keys.NewPingKey(), CreatedAt: now, UpdatedAt: now}
	f.apply(m, channels)
	f.validate(m, now)
	if len(f.Errors) == 0 {
		err = h.manage.MonitorCreate(ctx, m)
		var ve *monitors.ValidationError
		switch {
		case errors.Is(err, monitors.ErrConflict):
			f.Errors["slug"] = fmt.Sprintf("Slug: another monitor of this project is called %q; choose another slug.", m.Slug)
		case errors.As(err, &ve):
			field, _ := formField(ve.Field, f.Kind)
			f.Errors[field] = validationText(err, f.Kind)
		case err != nil:
			return err
		}
	}
	if len(f.Errors) > 0 {
		return h.renderMonitorForm(c, http.StatusUnprocessableEntity, v, f)
	}
	h.log.Info("monitor created from the dashboard", "monitor_id", m.ID, "user_id", v.User.ID)
	h.flash(c, "Created. Add its ping URL to your job; it is watched from its first ping.")
	return redirect(c, "/monitors/"+m.ID)
}

func (h *Handler) monitorEdit(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	return h.renderMonitorForm(c, http.StatusOK, v, formFromMonitor(m))
}

// formInvalid aborts a MonitorPatch whose form has errors.
var errFormInvalid = errors.New("web: the form has errors")

// monitorUpdate saves an edit through the service the API uses: the
// fields the person changed become person fields, so that a source's next
// declaration leaves them alone, and the slug of a source's monitor stays
// the source's.
func (h *Handler) monitorUpdate(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := formFromRequest(c)
	if err != nil {
		return err
	}
	f.ID, f.Source = m.ID, m.Source
	channels, err := h.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return err
	}
	now := h.now()
	_, _, err = h.manage.MonitorChange(ctx, &manage.MonitorChange{ProjectID: v.Project.ID, ID: m.ID,
		Apply: func(m *monitors.Monitor) ([]string, error) {
			before := *m
			f.apply(m, channels)
			f.validate(m, now)
			if len(f.Errors) > 0 {
				return nil, errFormInvalid
			}
			return manage.ChangedFields(&before, m), nil
		}})
	var ve *monitors.ValidationError
	switch {
	case errors.Is(err, errFormInvalid):
	case errors.As(err, &ve):
		field, _ := formField(ve.Field, f.Kind)
		f.Errors[field] = validationText(err, f.Kind)
	case errors.Is(err, monitors.ErrConflict):
		f.Errors["slug"] = fmt.Sprintf("Slug: another monitor of this project is called %q; choose another slug.", f.Slug)
	case err != nil:
		return err
	}
	if len(f.Errors) > 0 {
		return h.renderMonitorForm(c, http.StatusUnprocessableEntity, v, f)
	}
	h.flash(c, "Saved.")
	return redirect(c, "/monitors/"+m.ID)
}

// previewData is the live reading of a schedule in the form.
type previewData struct {
	Error    string
	Words    string
	Zone     string
	Times    []string
	Interval bool
}

// schedulePreview answers the form's htmx request as the schedule is typed.
func (h *Handler) schedulePreview(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	d := preview(&monitorForm{Kind: c.QueryParam("schedule_kind"), Expr: c.QueryParam("expr"), TZ: c.QueryParam("tz"),
		Every: c.QueryParam("every"), Dialect: c.QueryParam("dialect")}, h.now())
	return h.renderFragment(c, http.StatusOK, "preview", "preview-fragment", &page{V: v, Data: d})
}

// preview reads the schedule of a form: its plain-language description and
// its next five fire times in its own zone and its scheduler's dialect, or
// what is wrong with it, in words.
func preview(f *monitorForm, now time.Time) *previewData {
	expr, tz, every := f.Expr, f.TZ, f.Every
	switch monitors.ScheduleKind(f.Kind) {
	case monitors.ScheduleInterval:
		secs, err := parseFormDuration(every)
		switch {
		case err != nil:
			return &previewData{Interval: true, Error: "Interval: " + err.Error() + "."}
		case secs == 0:
			return &previewData{Interval: true, Error: "Interval: enter how often the job runs, such as 5m, 1h or 1d."}
		}
		if _, err := monitors.ParseSchedule(monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: secs}); err != nil {
			return &previewData{Interval: true, Error: validationText(err, f.Kind)}
		}
		return &previewData{Interval: true, Words: "Expects a ping every " + plainDuration(time.Duration(secs)*time.Second) +
			", counted from the last ping."}
	case monitors.ScheduleCron, monitors.ScheduleOnCalendar:
	default:
		return &previewData{Error: "Schedule: choose a cron expression, an interval or a systemd timer."}
	}
	expr = strings.TrimSpace(expr)
	if tz = strings.TrimSpace(tz); tz == "" {
		tz = "UTC"
	}
	if expr == "" && monitors.ScheduleKind(f.Kind) == monitors.ScheduleOnCalendar {
		return &previewData{Error: "Calendar expression: enter one, such as Mon..Fri 02:30 or *-*-* *:00/15:00."}
	}
	if expr == "" {
		return &previewData{Error: "Cron expression: enter one, such as 0 2 * * * (02:00 every day) or */15 * * * *."}
	}
	spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: tz, Dialect: monitors.Dialect(f.Dialect)}
	if monitors.ScheduleKind(f.Kind) == monitors.ScheduleOnCalendar {
		spec = monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: expr, TZ: tz}
	}
	sched, err := monitors.ValidateSchedule(spec.WithDefaults())
	if err != nil {
		return &previewData{Error: validationText(err, f.Kind)}
	}
	loc := sched.Location()
	if _, ok := sched.(monitors.Interval); ok { // robfig's @every
		return &previewData{Interval: true, Words: "Expects a ping every " + plainDuration(sched.Next(now).Sub(now)) +
			", counted from the last run (robfig's @every)."}
	}
	d := &previewData{Words: capitalize(cmp.Or(monitors.ScheduleWords(sched), expr)), Zone: loc.String()}
	t := now
	for range 5 {
		t = sched.Next(t)
		if t.IsZero() {
			break
		}
		lt := t.In(loc)
		d.Times = append(d.Times, lt.Format("Mon 2 Jan 2006, 15:04:05 MST"))
	}
	if len(d.Times) == 0 {
		d.Error = neverFires(spec.Kind)
	}
	return d
}

// validationText is err in words, labelled with the form field it names,
// for a form whose schedule is of kind.
func validationText(err error, kind string) string {
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		_, label := formField(ve.Field, kind)
		return label + ": " + ve.Message + "."
	}
	return err.Error()
}

// commonZones are offered as suggestions in the time zone field; any IANA
// name is accepted.
var commonZones = []string{
	"UTC", "Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos", "Africa/Nairobi",
	"America/Anchorage", "America/Argentina/Buenos_Aires", "America/Bogota", "America/Chicago", "America/Denver",
	"America/Halifax", "America/Los_Angeles", "America/Mexico_City", "America/New_York", "America/Phoenix",
	"America/Sao_Paulo", "America/Toronto", "America/Vancouver", "Asia/Bangkok", "Asia/Dhaka", "Asia/Dubai",
	"Asia/Hong_Kong", "Asia/Jakarta", "Asia/Jerusalem", "Asia/Karachi", "Asia/Kolkata", "Asia/Manila",
	"Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Taipei", "Asia/Tehran", "Asia/Tokyo",
	"Atlantic/Reykjavik", "Australia/Adelaide", "Australia/Brisbane", "Australia/Perth", "Australia/Sydney",
	"Europe/Amsterdam", "Europe/Athens", "Europe/Berlin", "Europe/Brussels", "Europe/Dublin", "Europe/Helsinki",
	"Europe/Istanbul", "Europe/Kyiv", "Europe/Lisbon", "Europe/London", "Europe/Madrid", "Europe/Moscow",
	"Europe/Oslo", "Europe/Paris", "Europe/Prague", "Europe/Rome", "Europe/Stockholm", "Europe/Vienna",
	"Europe/Warsaw", "Europe/Zurich", "Pacific/Auckland", "Pacific/Honolulu",
}
