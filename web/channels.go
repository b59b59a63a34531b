package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers/kinds"
)

// channelField is one config key of a channel kind, as the form shows it.
type channelField struct {
	Key   string
	Label string
	Help  string
	// Input is text, url, password, lines (a list of strings, one per
	// line), headers (a map, "Name: value" per line), textarea or select.
	Input    string
	Options  []string
	Required bool
}

// channelKind describes a kind for people.
type channelKind struct {
	Name   string
	Label  string
	Fields []channelField
}

// channelKinds lists every kind of notifiers/kinds with its form fields,
// in the registry's order. A test checks that the keys match the registry.
var channelKinds = []channelKind{
	{"slack", "Slack", []channelField{
		{Key: "webhook_url", Label: "Webhook URL", Input: "url", Help: "An incoming webhook (https://hooks.slack.com/services/…). Or leave it empty and use a bot token and a channel."},
		{Key: "token", Label: "Bot token", Input: "password", Help: "xoxb-…, with the chat:write scope; instead of a webhook."},
		{Key: "channel", Label: "Channel", Input: "text", Help: "With a bot token: a channel ID or #name."},
	}},
	{"email", "Email", []channelField{
		{Key: "to", Label: "Recipients", Input: "lines", Required: true, Help: "One address per line. Mail goes through this Vigil's SMTP server."},
	}},
	{"webhook", "Webhook", []channelField{
		{Key: "url", Label: "URL", Input: "url", Required: true, Help: "Receives a POST with a JSON payload for each notification."},
		{Key: "secret", Label: "Signing secret", Input: "password", Help: "Optional: signs every request (Vigil-Signature header)."},
		{Key: "headers", Label: "Headers", Input: "headers", Help: "Optional, one per line, as Name: value (for example Authorization: Bearer …)."},
		{Key: "template", Label: "Body template", Input: "textarea", Help: "Optional Go text/template for the body instead of the default JSON, such as {{json .Incident.Summary}}."},
	}},
	{"pagerduty", "PagerDuty", []channelField{
		{Key: "routing_key", Label: "Routing key", Input: "password", Required: true, Help: "The Integration Key of an Events API v2 integration."},
		{Key: "severity", Label: "Severity", Input: "select", Options: []string{"", "critical", "error", "warning", "info"}, Help: "Default: critical."},
	}},
	{"discord", "Discord", []channelField{
		{Key: "webhook_url", Label: "Webhook URL", Input: "url", Required: true, Help: "https://discord.com/api/webhooks/…"},
	}},
	{"teams", "Microsoft Teams", []channelField{
		{Key: "webhook_url", Label: "Workflows webhook URL", Input: "url", Required: true},
	}},
	{"opsgenie", "Opsgenie", []channelField{
		{Key: "api_key", Label: "API key", Input: "password", Required: true, Help: "The key of an API integration."},
		{Key: "region", Label: "Region", Input: "select", Options: []string{"", "us", "eu"}, Help: "Default: us."},
	}},
	{"telegram", "Telegram", []channelField{
		{Key: "bot_token", Label: "Bot token", Input: "password", Required: true, Help: "The token @BotFather gave, 123456:ABC-DEF…"},
		{Key: "chat_id", Label: "Chat ID", Input: "text", Required: true, Help: "A chat's numeric ID (negative for groups) or a public channel's @username."},
	}},
	{"ntfy", "ntfy", []channelField{
		{Key: "url", Label: "Topic URL", Input: "url", Required: true, Help: "The server and the topic, such as https://ntfy.sh/my-topic."},
		{Key: "token", Label: "Access token", Input: "password", Help: "Optional: tk_…"},
	}},
}

func lookupKind(name string) (*channelKind, kinds.Kind, bool) {
	for i := range channelKinds {
		if channelKinds[i].Name == name {
			k, err := kinds.Lookup(name)
			if err != nil {
				return nil, nil, false
			}
			return &channelKinds[i], k, true
		}
	}
	return nil, nil, false
}

type channelRow struct {
	ID, Name, Kind, KindLabel, Summary string
	IsDefault                          bool
	// Report is the channel's report field (weekly, monthly, "").
	Report string
	// NotifyLate and GroupSeconds are the channel's late warning and
	// grouping.
	NotifyLate   bool
	GroupSeconds int
}

type channelListData struct {
	Channels []channelRow
	Kinds    []channelKind
	CanTest  bool
	Monitors int
}

func (h *Handler) channelList(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	chs, err := h.store.ChannelList(c.Request().Context(), &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return err
	}
	d := &channelListData{Kinds: channelKinds, CanTest: h.tester != nil}
	for _, ch := range chs {
		ck, k, ok := lookupKind(ch.Kind)
		row := channelRow{ID: ch.ID, Name: ch.Name, Kind: ch.Kind, KindLabel: ch.Kind, IsDefault: ch.IsDefault,
			Report: string(ch.Report), NotifyLate: ch.NotifyLate, GroupSeconds: ch.GroupSeconds}
		if ok {
			row.KindLabel = ck.Label
			row.Summary = configSummary(k.Redact(ch.Config))
		}
		d.Channels = append(d.Channels, row)
	}
	return h.render(c, http.StatusOK, "channels", &page{Title: "Alert channels", Nav: "channels", V: v, Data: d})
}

// configSummary shows the non-secret settings of a channel in one line.
func configSummary(redacted json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(redacted, &m); err != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "template" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		switch val := m[k].(type) {
		case []any:
			var s []string
			for _, x := range val {
				s = append(s, fmt.Sprint(x))
			}
			parts = append(parts, strings.Join(s, ", "))
		default:
			parts = append(parts, fmt.Sprint(val))
		}
	}
	return strings.Join(parts, " · ")
}

// channelForm is the create and edit form of a channel.
type channelForm struct {
	ID        string
	Kind      *channelKind
	Name      string
	IsDefault bool
	// NotifyLate and Group are the channel's notify_late and
	// group_seconds (as typed); Pages hides them for the kinds that page.
	NotifyLate bool
	Group      string
	Pages      bool
	// Report is the channel's report field (weekly, monthly, "" for
	// none); Reports shows it for the kinds that carry reports.
	Report  string
	Reports bool
	// Values are the non-secret values shown again; secrets are never
	// sent back to the browser.
	Values  map[string]string
	Secrets map[string]bool // secret keys with a stored value
	Errors  map[string]string
	Error   string
	Kinds   []channelKind
}

// IsSecret reports whether key is write-only for the form's kind.
func (f *channelForm) IsSecret(key string) bool {
	_, k, ok := lookupKind(f.Kind.Name)
	return ok && slices.Contains(k.SecretKeys(), key)
}

// label returns the form label of a config key.
func (f *channelForm) label(key string) string {
	for _, fd := range f.Kind.Fields {
		if fd.Key == key {
			return fd.Label
		}
	}
	return key
}

// labels returns the form labels of keys, joined as in a sentence.
func (f *channelForm) labels(keys []string, conj string) string {
	var out []string
	for _, key := range keys {
		out = append(out, f.label(key))
	}
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " " + conj + " " + out[len(out)-1]
}

// MoveNote warns, on the edit form of a channel with stored secrets, that
// changing where it sends forgets them (kinds.KeepSecrets); "" otherwise.
func (f *channelForm) MoveNote() string {
	_, k, ok := lookupKind(f.Kind.Name)
	if !ok || f.ID == "" || len(f.Secrets) == 0 {
		return ""
	}
	var stored []string
	for _, key := range k.SecretKeys() {
		if f.Secrets[key] {
			stored = append(stored, key)
		}
	}
	return fmt.Sprintf("Changing the %s forgets the stored %s unless you enter them again here: a secret never follows a channel to a new address.",
		f.labels(k.DestinationKeys(), "or"), f.labels(stored, "and"))
}

// forgottenNote says which stored secrets a save forgot because the
// channel now sends somewhere else; "" when it forgot none.
func (f *channelForm) forgottenNote(forgotten []string) string {
	if len(forgotten) == 0 {
		return ""
	}
	_, k, _ := lookupKind(f.Kind.Name)
	return fmt.Sprintf("The stored %s forgotten because the %s changed: enter %s again if the new address needs %s.",
		f.labels(forgotten, "and")+pick(len(forgotten) == 1, " was", " were"), f.labels(k.DestinationKeys(), "or"),
		pick(len(forgotten) == 1, "it", "them"), pick(len(forgotten) == 1, "it", "them"))
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

func (h *Handler) channelNew(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ck, _, ok := lookupKind(c.QueryParam("kind"))
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/channels")
	}
	f := &channelForm{Kind: ck, Values: map[string]string{}, Secrets: map[string]bool{}, Errors: map[string]string{}, Kinds: channelKinds,
		Group: strconv.Itoa(monitors.ChannelGroupDefault(ck.Name)), Pages: monitors.ChannelPages(ck.Name),
		Reports: monitors.ChannelReports(ck.Name)}
	return h.render(c, http.StatusOK, "channel_form", &page{Title: "New " + ck.Label + " channel", Nav: "channels", V: v, Data: f})
}

// readAlerting reads the late warning and the grouping of the form (not
// shown for the kinds that page, which keep neither). It returns the
// group seconds, nil when not given; a value that is no whole number is
// an error of the form.
func (f *channelForm) readAlerting(c echo.Context) *int {
	if f.Reports {
		// manage checks the value: anything but weekly and monthly is an
		// error of the report field.
		f.Report = strings.TrimSpace(c.FormValue("report"))
	}
	if f.Pages {
		return nil
	}
	f.NotifyLate = c.FormValue("notify_late") == "on"
	f.Group = strings.TrimSpace(c.FormValue("group_seconds"))
	if f.Group == "" {
		return nil
	}
	n, err := strconv.Atoi(f.Group)
	if err != nil {
		f.Errors["group_seconds"] = fmt.Sprintf("Group seconds: a whole number of seconds from 0 to %d.", monitors.ChannelGroupMax)
		return nil
	}
	return &n
}

// readConfig turns the form into the kind's JSON config. Secret fields
// left empty are left out, so that on an edit they keep their stored
// value; "clear_<key>" removes one.
func (f *channelForm) readConfig(c echo.Context) json.RawMessage {
	cfg := map[string]any{}
	for _, fd := range f.Kind.Fields {
		raw := c.FormValue(fd.Key)
		secret := f.IsSecret(fd.Key)
		if secret && c.FormValue("clear_"+fd.Key) == "on" {
			cfg[fd.Key] = nil
			continue
		}
		if !secret {
			f.Values[fd.Key] = raw
		}
		switch fd.Input {
		case "lines":
			var list []string
			for _, line := range strings.Split(raw, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					list = append(list, line)
				}
			}
			if len(list) > 0 || fd.Required {
				cfg[fd.Key] = nonNilStrings(list)
			}
		case "headers":
			hd := map[string]string{}
			for i, line := range strings.Split(raw, "\n") {
				if strings.TrimSpace(line) == "" {
					continue
				}
				name, value, ok := strings.Cut(line, ":")
				if !ok {
					f.Errors[fd.Key] = fmt.Sprintf("%s: line %d is not Name: value.", fd.Label, i+1)
					continue
				}
				hd[strings.TrimSpace(name)] = strings.TrimSpace(value)
			}
			if len(hd) > 0 {
				cfg[fd.Key] = hd
			}
		case "textarea":
			if raw != "" {
				cfg[fd.Key] = raw
			}
		default:
			if raw = strings.TrimSpace(raw); raw != "" {
				cfg[fd.Key] = raw
			}
		}
	}
	b, _ := json.Marshal(cfg) // a map of strings, lists and maps always encodes
	return b
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// configErrors spreads the kind's validation errors ("key: message", one
// per line) over the form's fields.
func (f *channelForm) configErrors(err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		key, msg, ok := strings.Cut(line, ": ")
		if i := strings.IndexByte(key, '['); i > 0 {
			key = key[:i]
		}
		label := key
		found := false
		for _, fd := range f.Kind.Fields {
			if fd.Key == key {
				label, found = fd.Label, true
			}
		}
		if !ok || !found {
			f.Error = strings.TrimSpace(f.Error + " " + capitalize(line) + ".")
			continue
		}
		if prev := f.Errors[key]; prev != "" {
			f.Errors[key] = prev + " " + capitalize(msg) + "."
		} else {
			f.Errors[key] = label + ": " + msg + "."
		}
	}
}

func (h *Handler) channelCreate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ck, k, ok := lookupKind(c.FormValue("kind"))
	if !ok {
		return echo.NewHTTPError(http.StatusBadRequest, "Choose one of the channel kinds.")
	}
	f := &channelForm{Kind: ck, Name: strings.TrimSpace(c.FormValue("name")), IsDefault: c.FormValue("is_default") == "on",
		Values: map[string]string{}, Secrets: map[string]bool{}, Errors: map[string]string{}, Kinds: channelKinds,
		Pages: monitors.ChannelPages(ck.Name), Reports: monitors.ChannelReports(ck.Name)}
	raw := f.readConfig(c)
	group := f.readAlerting(c)
	if f.Name == "" {
		f.Errors["name"] = "Name: give the channel a name, such as ops on-call."
	}
	if len(f.Errors) == 0 {
		if err := k.Validate(raw); err != nil {
			f.configErrors(err)
		}
	}
	if len(f.Errors) == 0 && f.Error == "" {
		_, err := h.manage.ChannelCreate(c.Request().Context(), &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: v.Project.ID,
			Kind: ck.Name, Name: f.Name, Config: raw, IsDefault: f.IsDefault, NotifyLate: f.NotifyLate, GroupSeconds: group,
			Report: monitors.ReportPeriod(f.Report), Now: h.now()})
		var ve *monitors.ValidationError
		switch {
		case errors.As(err, &ve):
			f.Errors[ve.Field] = capitalize(ve.Field) + ": " + ve.Message + "."
		case errors.Is(err, monitors.ErrConflict):
			f.Errors["name"] = "Name: another channel of this project has this name."
		case err != nil:
			return err
		default:
			h.flash(c, fmt.Sprintf("Created the channel %s.", f.Name))
			return redirect(c, "/channels")
		}
	}
	return h.render(c, http.StatusUnprocessableEntity, "channel_form", &page{Title: "New " + ck.Label + " channel", Nav: "channels", V: v, Data: f})
}

func (h *Handler) loadChannel(c echo.Context) (*viewer, *monitors.Channel, error) {
	v := c.Get(viewerKey).(*viewer)
	ch, err := h.store.ChannelGet(c.Request().Context(), v.Project.ID, c.Param("id"))
	if err != nil {
		return nil, nil, err
	}
	return v, ch, nil
}

func channelFormFor(ch *monitors.Channel) (*channelForm, kinds.Kind, error) {
	ck, k, ok := lookupKind(ch.Kind)
	if !ok {
		return nil, nil, fmt.Errorf("channel %s has the unknown kind %q", ch.ID, ch.Kind)
	}
	f := &channelForm{ID: ch.ID, Kind: ck, Name: ch.Name, IsDefault: ch.IsDefault, NotifyLate: ch.NotifyLate,
		Group: strconv.Itoa(ch.GroupSeconds), Pages: monitors.ChannelPages(ch.Kind),
		Report: string(ch.Report), Reports: monitors.ChannelReports(ch.Kind),
		Values: map[string]string{}, Secrets: map[string]bool{}, Errors: map[string]string{}, Kinds: channelKinds}
	var stored map[string]json.RawMessage
	_ = json.Unmarshal(ch.Config, &stored)
	for _, fd := range ck.Fields {
		val, ok := stored[fd.Key]
		if !ok || bytes.Equal(val, []byte("null")) {
			continue
		}
		if slices.Contains(k.SecretKeys(), fd.Key) {
			f.Secrets[fd.Key] = true
			continue
		}
		f.Values[fd.Key] = formValue(fd, val)
	}
	return f, k, nil
}

// formValue writes a stored config value back as the form's text.
func formValue(fd channelField, val json.RawMessage) string {
	switch fd.Input {
	case "lines":
		var list []string
		_ = json.Unmarshal(val, &list)
		return strings.Join(list, "\n")
	case "headers":
		var hd map[string]string
		_ = json.Unmarshal(val, &hd)
		var lines []string
		for k, v := range hd {
			lines = append(lines, k+": "+v)
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	var s string
	if json.Unmarshal(val, &s) == nil {
		return s
	}
	return string(val) // a number, such as a Telegram chat ID
}

func (h *Handler) channelEdit(c echo.Context) error {
	v, ch, err := h.loadChannel(c)
	if err != nil {
		return err
	}
	f, _, err := channelFormFor(ch)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "channel_form", &page{Title: "Edit " + ch.Name, Nav: "channels", V: v, Data: f})
}

func (h *Handler) channelUpdate(c echo.Context) error {
	v, ch, err := h.loadChannel(c)
	if err != nil {
		return err
	}
	f, _, err := channelFormFor(ch)
	if err != nil {
		return err
	}
	f.Name, f.IsDefault = strings.TrimSpace(c.FormValue("name")), c.FormValue("is_default") == "on"
	f.Values = map[string]string{}
	incoming := f.readConfig(c)
	group := f.readAlerting(c)
	if f.Name == "" {
		f.Errors["name"] = "Name: give the channel a name."
	}
	ctx := c.Request().Context()
	if len(f.Errors) == 0 {
		var forgotten []string
		_, err = h.manage.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: v.Project.ID, ID: ch.ID,
			Fn: func(cur *monitors.Channel) error {
				merged, dropped, err := manage.ChannelConfig(cur.Kind, cur.Config, incoming)
				var ce *manage.ConfigError
				if errors.As(err, &ce) {
					f.configErrors(ce.Err)
					if note := f.forgottenNote(ce.Forgotten); note != "" {
						f.Error = strings.TrimSpace(f.Error + " " + note)
					}
					return errFormInvalid
				}
				if err != nil {
					return err
				}
				forgotten = dropped
				cur.Name, cur.Config, cur.IsDefault, cur.UpdatedAt = f.Name, merged, f.IsDefault, h.now()
				if f.Reports {
					cur.Report = monitors.ReportPeriod(f.Report)
				}
				if !f.Pages {
					cur.NotifyLate = f.NotifyLate
					if group != nil {
						cur.GroupSeconds = *group
					}
				}
				return nil
			}})
		var ve *monitors.ValidationError
		switch {
		case errors.Is(err, errFormInvalid):
		case errors.As(err, &ve):
			f.Errors[ve.Field] = capitalize(ve.Field) + ": " + ve.Message + "."
		case errors.Is(err, monitors.ErrConflict):
			f.Errors["name"] = "Name: another channel of this project has this name."
		case err != nil:
			return err
		default:
			h.flash(c, strings.TrimSpace(fmt.Sprintf("Saved the channel %s. %s", f.Name, f.forgottenNote(forgotten))))
			return redirect(c, "/channels")
		}
	}
	return h.render(c, http.StatusUnprocessableEntity, "channel_form", &page{Title: "Edit " + ch.Name, Nav: "channels", V: v, Data: f})
}

func (h *Handler) channelDelete(c echo.Context) error {
	v, ch, err := h.loadChannel(c)
	if err != nil {
		return err
	}
	err = h.store.ChannelDelete(c.Request().Context(), v.Project.ID, ch.ID)
	var inUse *monitors.ChannelInUseError
	switch {
	case errors.As(err, &inUse):
		h.flashError(c, fmt.Sprintf("%s still alerts for %s: take it off those monitors first.", ch.Name, strings.Join(inUse.Monitors, ", ")))
	case err != nil:
		return err
	default:
		h.flash(c, fmt.Sprintf("Deleted the channel %s.", ch.Name))
	}
	return redirect(c, "/channels")
}

// channelTest sends a test notification, as POST
// /api/v1/channels/{id}/test does, and says how it went.
func (h *Handler) channelTest(c echo.Context) error {
	v, ch, err := h.loadChannel(c)
	if err != nil {
		return err
	}
	if h.tester == nil {
		return echo.NewHTTPError(http.StatusNotImplemented, "This Vigil cannot send test notifications.")
	}
	if err := h.tester.TestChannel(c.Request().Context(), ch); err != nil {
		h.log.Info("test notification failed", "channel_id", ch.ID, "user_id", v.User.ID, "err", err)
		h.flashError(c, fmt.Sprintf("The test notification to %s failed: %v", ch.Name, err))
	} else {
		h.flash(c, fmt.Sprintf("Sent a test notification to %s.", ch.Name))
	}
	return redirect(c, "/channels")
}
