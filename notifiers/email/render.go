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
	Color    string
}

func newView(n *notifiers.Notification) view {
	v := view{
		Headline: n.Headline(),
		Summary:  n.Summary(),
		Facts:    n.Facts(),
		Link:     n.Link(),
		Color:    "#D92D20",
	}
	if n.Event != notifiers.EventResolved {
		v.Details = n.Incident.Details
	}
	switch n.Event {
	case notifiers.EventResolved:
		v.Color = "#12B76A"
	case notifiers.EventUpdated, notifiers.EventReminder:
		v.Color = "#F79009"
	case notifiers.EventTest:
		v.Color = "#667085"
	}
	return v
}

var textTemplate = texttemplate.Must(texttemplate.New("text").Parse(`{{.Headline}}

{{.Summary}}
{{- if .Details}}

{{.Details}}
{{- end}}
{{if .Facts}}
{{range .Facts}}{{.Label}}: {{.Value}}
{{end}}{{end}}
{{- if .Link}}
Open in Vigil: {{.Link}}
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
{{- if .Facts}}
<table role="presentation" cellpadding="0" cellspacing="0" style="margin:12px 0;font-size:14px">
{{- range .Facts}}
<tr><td style="padding:2px 16px 2px 0;color:#475467">{{.Label}}</td><td style="padding:2px 0">{{.Value}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- if .Link}}
<p style="margin:20px 0 0"><a href="{{.Link}}" style="display:inline-block;padding:10px 16px;background:#101828;color:#ffffff;text-decoration:none;border-radius:4px">Open in Vigil</a></p>
{{- end}}
</td></tr>
</table>
<p style="max-width:600px;margin:12px auto 0;font-size:12px;color:#667085">Sent by Vigil.</p>
</body>
</html>
`))

// render returns the plain-text and HTML bodies for n.
func render(n *notifiers.Notification) (text, html string, err error) {
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
