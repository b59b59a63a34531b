package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// renderSlack is how much longer than its budget a refused render may take
// on a busy machine: the budget is checked at every step and write, so a
// render overruns it by at most one range body.
const renderSlack = 900 * time.Millisecond

// AdversarialTemplates are templates built to cost without bound. Each is
// refused when saved, with the words that name the problem. The abuse
// suite (server/abuse_test.go) sends them through the API too.
var adversarialTemplates = []struct {
	name, template, refusal string
}{
	{"range over a huge number", `{{range 9223372036854775807}}{{end}}`, "range must go over a field"},
	{"range over a huge number in a variable", `{{$n := 9223372036854775807}}{{range $n}}{{end}}`, "number 9223372036854775807 is too large"},
	{"range over a duration", `{{range .Downtime}}{{end}}`, "range over more than 1000 items"},
	{"range over a time in seconds", `{{range $t := .Incident.OpenedAt.Unix}}x{{end}}`, "range over more than 1000 items"},
	{"range over a function result", `{{range (len .Monitor.Tags)}}{{end}}`, "range must go over a field"},
	{"printf with a huge width", `{{printf "%0999999999d" 1}}`, "printf: widths and precisions must be below 1000"},
	{"printf with a width from an argument", `{{printf "%*d" 999 1}}`, "a width or precision from an argument"},
	{"nested printf", strings.Repeat(`{{printf "%s%s" (`, 1) + strings.Repeat(`printf "%s%s" (`, 20) + `.Headline` + strings.Repeat(`) .Headline`, 20) + `) .Headline}}`, "nested deeper than 16"},
	{"doubling a variable", `{{$a := .Headline}}` + strings.Repeat(`{{$a = print $a $a}}`, 40) + `{{$a}}`, "its functions produce more than"},
	{"recursion through template", `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, "define and block are not supported"},
	{"template call", `{{template "x" .}}`, "{{template}} is not supported"},
	{"block", `{{block "b" .}}{{.Headline}}{{end}}`, "define and block are not supported"},
	{"deep nesting", strings.Repeat(`{{if true}}`, 100) + strings.Repeat(`{{end}}`, 100), "nested deeper than 16"},
	{"deep parentheses", `{{` + strings.Repeat(`(`, 200) + `1` + strings.Repeat(`)`, 200) + `}}`, "nested deeper than 16"},
	{"enormous string literal", `{{"` + strings.Repeat("a", 5000) + `"}}`, "a string literal of 5000 bytes"},
	{"enormous number literal", `{{index .Monitor.Tags 1e300}}`, "number 1e300 is too large"},
	{"nested ranges", `{{range .Facts}}{{range $.Facts}}{{range $.Facts}}{{range $.Facts}}{{range $.Facts}}{{range $.Facts}}{{range $.Facts}}{{range $.Facts}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}`, "takes (more than 100000 steps|longer than 250ms)"},
	{"huge output", `{{range .Facts}}{{range $.Facts}}{{range $.Facts}}` + strings.Repeat("x", 4000) + `{{end}}{{end}}{{end}}`, "renders a body larger than"},
	{"call", `{{call .Headline}}`, `function "call" is not available`},
	{"time Format with a long layout", `{{.Incident.OpenedAt.Format "2006"}}`, `"Format" is not a field or method`},
	{"too many actions", strings.Repeat(`{{.Headline}}`, 5001), "has 5001 actions; at most 5000"},
}

func TestAdversarialTemplatesAreRefusedOnSave(t *testing.T) {
	t.Parallel()
	for _, c := range adversarialTemplates {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			err := (&webhook.Config{URL: "https://example.com", Template: c.template}).Validate()
			require.Error(t, err)
			require.Less(t, time.Since(start), webhook.TemplateRenderBudget*5+renderSlack)
			require.True(t, strings.HasPrefix(err.Error(), "template: "), err.Error())
			require.Regexp(t, c.refusal, err.Error())
		})
	}
}

// TestTemplateQuietOnSampleIsBoundedOnSend: a template that costs nothing
// on the samples tried at save time, and everything on a real monitor with
// many tags, stops within its budget at send time, with a permanent error,
// and sends nothing.
func TestTemplateQuietOnSampleIsBoundedOnSend(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	loop := `{{range .Monitor.Tags}}{{range $.Monitor.Tags}}{{range $.Monitor.Tags}}{{range $.Monitor.Tags}}{{end}}{{end}}{{end}}{{end}}`
	w := newNotifier(t, webhook.Config{URL: recv.URL, Template: `{{if gt (len .Monitor.Tags) 5}}` + loop + `{{end}}ok`})
	n := notifiertest.Opened()
	for i := range 100 {
		n.Monitor.Tags = append(n.Monitor.Tags, fmt.Sprintf("tag-%d", i))
	}
	start := time.Now()
	err := w.Notify(context.Background(), n)
	require.Less(t, time.Since(start), webhook.TemplateRenderBudget+renderSlack)
	require.Error(t, err)
	require.Regexp(t, "takes (more than 100000 steps|longer than 250ms)", err.Error())
	// Out of steps is for good; out of time may be the machine's fault.
	require.Equal(t, strings.Contains(err.Error(), "steps"), notifiers.IsPermanent(err), "%v", err)
	require.Empty(t, recv.Requests())

	// A slower body per step runs out of time rather than steps.
	slow := `{{range .Monitor.Tags}}{{range $.Monitor.Tags}}{{range $.Monitor.Tags}}` +
		strings.Repeat(`{{$x := json $.Incident.Details}}`, 300) + `{{end}}{{end}}{{end}}`
	w = newNotifier(t, webhook.Config{URL: recv.URL, Template: `{{if gt (len .Monitor.Tags) 5}}` + slow + `{{end}}ok`})
	n.Incident.Details = strings.Repeat("d", 2000)
	start = time.Now()
	err = w.Notify(context.Background(), n)
	require.Less(t, time.Since(start), webhook.TemplateRenderBudget+renderSlack)
	require.Error(t, err)
	require.Empty(t, recv.Requests())
}

// TestTemplateDocumentedFields: every field and function the README and
// Config.Template document stays reachable.
func TestTemplateDocumentedFields(t *testing.T) {
	t.Parallel()
	tmpl := `{{.Event}} {{.Incident.ID}} {{.Incident.Kind}} {{rfc3339 .Incident.OpenedAt}} {{rfc3339 .Incident.ResolvedAt}} ` +
		`{{.Incident.Summary}} {{.Incident.Details}} {{.Monitor.ID}} {{.Monitor.Name}} {{.Monitor.Slug}} {{.Monitor.Status}} ` +
		`{{range $i, $t := .Monitor.Tags}}{{if $i}},{{end}}{{$t}}{{end}} {{.Monitor.URL}} {{.Monitor.Schedule}} ` +
		`{{rfc3339 .Monitor.LastPingAt}} {{rfc3339 .Monitor.NextExpectedAt}} {{rfc3339 .SentAt}} {{.BaseURL}} ` +
		`{{.Headline}} {{.Summary}} {{.DedupKey}} {{.Link}} {{.MonitorName}} {{.IsResolved}} {{.Downtime}} {{.OpenFor}} ` +
		`{{range .Facts}}{{.Label}}={{.Value}};{{end}} {{json (payload .)}} {{(payload .).Monitor.URL}} ` +
		`{{.Incident.OpenedAt.Unix}} {{.Incident.OpenedAt.Year}} {{.Downtime.Seconds}} ` +
		`{{printf "%-16s|%5.1f" .Monitor.Slug 1.5}} {{len .Monitor.Tags}} {{index .Monitor.Tags 0}} {{slice .Monitor.Name 0 3}} ` +
		`{{urlquery .Monitor.Name}} {{html "<b>"}} {{js "'"}} {{and true .IsResolved}} {{or false 1}} {{not true}} ` +
		`{{with .Incident.ResolvedAt}}resolved{{else}}open{{end}}{{/* a comment */}}` +
		`{{range .Monitor.Tags}}{{if eq . "etl"}}{{continue}}{{end}}{{break}}{{end}}`
	w := newNotifier(t, webhook.Config{URL: "https://example.com", Template: tmpl})
	body, err := w.Body(notifiertest.Resolved())
	require.NoError(t, err)
	require.Contains(t, string(body), "incident.resolved inc_01HZX3M4W6 missed 2026-03-14T01:05:00Z 2026-03-14T01:17:20Z")
	require.Contains(t, string(body), "etl,billing")
	require.Contains(t, string(body), `"event":"incident.resolved"`)
	require.Contains(t, string(body), "nightly-import  |  1.5")
	require.Contains(t, string(body), "resolved")
}

// TestAdversarialTemplatesFile keeps testdata/adversarial_templates.json,
// which the server's abuse suite sends through the API, the same as
// adversarialTemplates; -update rewrites it.
func TestAdversarialTemplatesFile(t *testing.T) {
	t.Parallel()
	type entry struct {
		Name     string `json:"name"`
		Template string `json:"template"`
		Refusal  string `json:"refusal"`
	}
	var want []entry
	for _, c := range adversarialTemplates {
		want = append(want, entry{c.name, c.template, c.refusal})
	}
	b, err := json.MarshalIndent(want, "", "  ")
	require.NoError(t, err)
	golden(t, "adversarial_templates", b)
}

// TestTemplateTriedOnMonitorEvents: a template is tried on the monitor
// events too when it is saved, so one that needs the payload's incident,
// null for monitor.undeclared and monitor.redeclared, is refused then
// rather than failing at its first monitor event.
func TestTemplateTriedOnMonitorEvents(t *testing.T) {
	t.Parallel()
	err := (&webhook.Config{URL: "https://example.com", Template: `{{(payload .).Incident.ID}}`}).Validate()
	require.Error(t, err)
	require.ErrorContains(t, err, "on a sample monitor.undeclared notification, which has no incident")
	require.ErrorContains(t, err, "nil pointer")
	guarded := `{{with (payload .).Incident}}{{.ID}}{{else}}{{(payload .).MonitorEvent.Summary}}{{end}}`
	require.NoError(t, (&webhook.Config{URL: "https://example.com", Template: guarded}).Validate())
}
