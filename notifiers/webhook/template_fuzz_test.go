package webhook_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// FuzzTemplate: whatever the text, a template is refused when saved, or it
// renders every notification, a large one included, within its budget and
// BodyMax, or stops with an error within its budget. Nothing panics. The
// seed corpus is testdata/fuzz/FuzzTemplate and the adversarial templates.
func FuzzTemplate(f *testing.F) {
	for _, c := range adversarialTemplates {
		f.Add(c.template)
	}
	f.Add(`{"text": {{json .Headline}}, "tags": [{{range $i, $t := .Monitor.Tags}}{{if $i}},{{end}}{{json $t}}{{end}}]}`)
	large := notifiertest.Opened()
	for i := range 200 {
		large.Monitor.Tags = append(large.Monitor.Tags, fmt.Sprintf("tag-%03d", i))
	}
	large.Incident.Details = string(make([]byte, 64<<10))
	notes := []*notifiers.Notification{notifiertest.Opened(), notifiertest.Resolved(), large}
	f.Fuzz(func(t *testing.T, text string) {
		cfg := webhook.Config{URL: "https://example.com", Template: text}
		start := time.Now()
		if err := cfg.Validate(); err != nil {
			// Saving tries one sample of each of the five events.
			require.Less(t, time.Since(start), 5*webhook.TemplateRenderBudget+renderSlack)
			return
		}
		w, err := webhook.New(cfg)
		require.NoError(t, err, "a template that validates builds")
		for _, n := range notes {
			start := time.Now()
			body, err := w.Body(n)
			require.Less(t, time.Since(start), webhook.TemplateRenderBudget+renderSlack)
			if err == nil {
				require.LessOrEqual(t, len(body), webhook.BodyMax)
			}
		}
	})
}
