package email

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

	"github.com/vigilhq/vigil/notifiers"
)

// view is what both templates render.
type view struct {
	Headline string
	Summary  string
	Details  string
	Facts    []notifiers.Fact
	Link     string
	RunLink  string
	// SnoozeLink snoozes the monitor for an hour, without a sign-in.
	SnoozeLink string
	// Output is the tail of the failing run's output; OutputCut says that
	// lines before it were left out.
	Output    string
	OutputCut bool
	Color     string
	// Span and Sections are a report's exact period and its lists.
	Span     string
	Sections []notifiers.ReportSection
}

// Bounds of the output an e-mail shows.
const (
	outputLines = 50
	outputChars = 8000
)

func newView(n *notifiers.Notification) view {
	v := view{
		Headline:   n.Headline(),
		Summary:    n.Summary(),
		Facts:      n.Facts(),
		Link:       n.Link(),
		RunLink:    n.RunURL(),
		SnoozeLink: n.SnoozeURL,
		Color:      "#D92D20",
	}
	if n.Event.IsReport() && n.Report != nil {
		v.Facts, v.Span, v.Sections = nil, n.Report.Span(), n.ReportSections()
	}
	if n.Event != notifiers.EventResolved {
		v.Details = n.Incident.Details
		v.Output, v.OutputCut = n.OutputFor(outputLines, outputChars, nil)
	}
	switch n.Tone() {
	case notifiers.ToneUp:
		v.Color = "#12B76A"
	case notifiers.ToneUpdate:
		v.Color = "#F79009"
	case notifiers.ToneNotice:
		v.Color = "#2E90FA"
	case notifiers.ToneTest:
		v.Color = "#667085"
	}
	return v
}

var textTemplate = texttemplate.Must(texttemplate.New("text").Funcs(texttemplate.FuncMap{"indent": indent}).Parse(`{{.Headline}}

{{.Summary}}
{{- if .Details}}

{{.Details}}
{{- end}}
{{- if .Span}}
Period: {{.Span}}
{{- end}}
{{range .Sections}}
{{.Title}}:
{{range .Lines}}  - {{if .Label}}{{.Label}}: {{end}}{{.Text}}{{if .URL}}
    {{.URL}}{{end}}
{{end}}{{if .More}}  and {{.More}} more
{{end}}{{end}}
{{- if .Facts}}
{{range .Facts}}{{.Label}}: {{.Value}}
{{end}}{{end}}
{{- if .Output}}
Output{{if .OutputCut}} (last lines){{end}}:

{{indent .Output}}
{{end}}
{{- if .Link}}
Open in Vigil: {{.Link}}
{{- if .RunLink}}
The run: {{.RunLink}}
{{- end}}
{{- if .SnoozeLink}}
Snooze 1 h (no sign-in): {{.SnoozeLink}}
{{- end}}
{{end}}
-- 
Sent by Vigil.
`))

// The HTML part uses inline styles and tables only: that is what mail
// clients render.
var htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{{.Headline}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#101828">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px;margin:0 auto;background:#ffffff;border-top:6px solid {{.Color}}">
<tr><td style="padding:24px">
<h1 style="margin:0 0 12px;font-size:20px">{{.Headline}}</h1>
<p style="margin:0 0 12px;font-size:15px">{{.Summary}}</p>
{{- if .Details}}
<p style="margin:0 0 12px;font-size:14px;color:#475467;white-space:pre-wrap">{{.Details}}</p>
{{- end}}
{{- if .Span}}
<p style="margin:0 0 12px;font-size:13px;color:#475467">Period: {{.Span}}</p>
{{- end}}
{{- range .Sections}}
<h2 style="margin:16px 0 6px;font-size:16px">{{.Title}}</h2>
<ul style="margin:0;padding-left:20px;font-size:14px">
{{- range .Lines}}
<li style="margin:2px 0">{{if .Label}}{{if .URL}}<a href="{{.URL}}" style="color:#101828">{{.Label}}</a>{{else}}{{.Label}}{{end}}: {{end}}{{.Text}}</li>
{{- end}}
{{- if .More}}
<li style="margin:2px 0;color:#475467">and {{.More}} more</li>
{{- end}}
</ul>
{{- end}}
{{- if .Facts}}
<table role="presentation" cellpadding="0" cellspacing="0" style="margin:12px 0;font-size:14px">
{{- range .Facts}}
<tr><td style="padding:2px 16px 2px 0;color:#475467">{{.Label}}</td><td style="padding:2px 0">{{.Value}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- if .Output}}
<p style="margin:16px 0 4px;font-size:14px;color:#475467">Output{{if .OutputCut}} (last lines){{end}}</p>
<pre style="margin:0;padding:12px;background:#101828;color:#f2f4f7;font-size:12px;line-height:1.4;white-space:pre-wrap;word-break:break-all;font-family:SFMono-Regular,Consolas,Menlo,monospace">{{.Output}}</pre>
{{- end}}
{{- if .Link}}
<p style="margin:20px 0 0"><a href="{{.Link}}" style="display:inline-block;padding:10px 16px;background:#101828;color:#ffffff;text-decoration:none;border-radius:4px">Open in Vigil</a>
{{- if .RunLink}} <a href="{{.RunLink}}" style="display:inline-block;padding:10px 16px;color:#101828;text-decoration:underline">Open the run</a>{{end}}
{{- if .SnoozeLink}} <a href="{{.SnoozeLink}}" style="display:inline-block;padding:10px 16px;color:#101828;text-decoration:underline">Snooze 1 h</a>{{end}}</p>
{{- end}}
</td></tr>
</table>
<p style="max-width:600px;margin:12px auto 0;font-size:12px;color:#667085">Sent by Vigil.</p>
</body>
</html>
`))

// Render returns the plain-text and HTML bodies of the e-mail about n.
func Render(n *notifiers.Notification) (text, html string, err error) {
	v := newView(n)
	var tb, hb bytes.Buffer
	if err := textTemplate.Execute(&tb, v); err != nil {
		return "", "", fmt.Errorf("render text part: %w", err)
	}
	if err := htmlTemplate.Execute(&hb, v); err != nil {
		return "", "", fmt.Errorf("render html part: %w", err)
	}
	return strings.ReplaceAll(tb.String(), "\r\n", "\n"), hb.String(), nil
}

// indent indents every line of s by four spaces, so that output stands
// apart from the text around it in a plain-text mail.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
