package monitors

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of status pages and incident notes.
const (
	StatusPageTitleMax = 200  // characters of a page's title
	StatusPageItemsMax = 200  // items of a page
	StatusPageNameMax  = 100  // characters of an item's public name
	IncidentNoteMax    = 2000 // characters of a note
	IncidentNotesMax   = 50   // notes of one incident
)

// StatusPage is a public page of a project's monitors, served without
// sign-in at /status/{slug} once published. What it shows of each monitor
// is decided where the page is rendered; here are what a person sets.
type StatusPage struct {
	ID        string `json:"id"`
	ProjectID string `json:"project_id"`
	// Slug names the page in its URL; unique across every project.
	Slug  string `json:"slug"`
	Title string `json:"title"`
	// Published pages are served; others answer as an unknown slug does.
	Published bool `json:"published"`
	// Items are what the page shows, in order.
	Items     []StatusPageItem `json:"items"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// StatusPageItem is one monitor (by ID) or every monitor with a tag, with
// the name the public sees: for a monitor, in place of its own name; for a
// tag, the heading of its monitors (default: the tag).
type StatusPageItem struct {
	Monitor string `json:"monitor,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Name    string `json:"name,omitempty"`
}

var statusPageSlugRe = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// Validate checks a page and normalizes its text (trimmed title and
// names, nil items as none).
func (p *StatusPage) Validate() error {
	if !statusPageSlugRe.MatchString(p.Slug) {
		return invalid("slug", "must be 1 to 64 characters of a-z, 0-9 and -, starting and ending with a letter or digit")
	}
	var err error
	if p.Title, err = publicText("title", p.Title, StatusPageTitleMax, false); err != nil {
		return err
	}
	if p.Title == "" {
		return invalid("title", "must not be empty")
	}
	if p.Items == nil {
		p.Items = []StatusPageItem{}
	}
	if len(p.Items) > StatusPageItemsMax {
		return invalid("items", "must be at most %d", StatusPageItemsMax)
	}
	seen := map[string]bool{}
	for i := range p.Items {
		it := &p.Items[i]
		field := fmt.Sprintf("items[%d]", i)
		it.Monitor, it.Tag = strings.TrimSpace(it.Monitor), strings.TrimSpace(it.Tag)
		switch {
		case it.Monitor == "" && it.Tag == "":
			return invalid(field, "names a monitor (its ID) or a tag: set one")
		case it.Monitor != "" && it.Tag != "":
			return invalid(field, "names a monitor or a tag, not both")
		case it.Tag != "" && (len(it.Tag) > 50 || strings.ContainsAny(it.Tag, " \t\r\n,")):
			return invalid(field+".tag", "tag %q must be 1 to 50 characters without spaces or commas", it.Tag)
		}
		key := "m:" + it.Monitor
		if it.Tag != "" {
			key = "t:" + it.Tag
		}
		if seen[key] {
			return invalid(field, "shows the same monitor or tag as an earlier item")
		}
		seen[key] = true
		if it.Name, err = publicText(field+".name", it.Name, StatusPageNameMax, false); err != nil {
			return err
		}
	}
	return nil
}

// publicText trims s and checks that it is at most max characters of
// printable text (newlines only where multiline allows them).
func publicText(field, s string, max int, multiline bool) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", invalid(field, "must be UTF-8 text")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", invalid(field, "must be at most %d characters (it has %d)", max, n)
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if !unicode.IsPrint(r) && r != ' ' {
			return "", invalid(field, "must not hold control characters")
		}
	}
	return s, nil
}

// StatusPageMonitor is a monitor as a page shows it: the monitor and the
// name the public sees.
type StatusPageMonitor struct {
	Monitor *Monitor
	Name    string
}

// StatusPageSection is one item of a page: its monitors, under a heading
// for a tag (empty for a monitor item).
type StatusPageSection struct {
	Heading  string
	Monitors []StatusPageMonitor
}

// Sections resolves the page's items against the project's monitors, in
// the page's order: a monitor item shows that monitor under its public
// name (default: its name); a tag item the monitors with the tag, by name,
// under the tag's heading. A monitor shown once is not shown again, and a
// monitor item's public name is used wherever the monitor is shown. Items
// naming monitors that are gone are left out.
func (p *StatusPage) Sections(all []*Monitor) []StatusPageSection {
	byID := make(map[string]*Monitor, len(all))
	for _, m := range all {
		byID[m.ID] = m
	}
	public := map[string]string{}
	for _, it := range p.Items {
		if it.Monitor != "" && it.Name != "" {
			public[it.Monitor] = it.Name
		}
	}
	name := func(m *Monitor) string {
		if n, ok := public[m.ID]; ok {
			return n
		}
		return m.Name
	}
	shown := map[string]bool{}
	var out []StatusPageSection
	for _, it := range p.Items {
		if it.Monitor != "" {
			m := byID[it.Monitor]
			if m == nil || shown[m.ID] {
				continue
			}
			shown[m.ID] = true
			out = append(out, StatusPageSection{Monitors: []StatusPageMonitor{{Monitor: m, Name: name(m)}}})
			continue
		}
		var ms []StatusPageMonitor
		for _, m := range all {
			if !shown[m.ID] && slices.Contains(m.Tags, it.Tag) {
				shown[m.ID] = true
				ms = append(ms, StatusPageMonitor{Monitor: m, Name: name(m)})
			}
		}
		slices.SortStableFunc(ms, func(a, b StatusPageMonitor) int { return strings.Compare(a.Name, b.Name) })
		heading := it.Name
		if heading == "" {
			heading = it.Tag
		}
		if len(ms) > 0 {
			out = append(out, StatusPageSection{Heading: heading, Monitors: ms})
		}
	}
	return out
}

// IncidentNote is a short note a person attaches to an incident, shown on
// the status pages that show its monitor and in their feeds.
type IncidentNote struct {
	ID         string    `json:"id"`
	ProjectID  string    `json:"project_id"`
	IncidentID string    `json:"incident_id"`
	Body       string    `json:"body"`
	CreatedAt  time.Time `json:"created_at"`
}

// Validate checks and trims a note's body.
func (n *IncidentNote) Validate() error {
	var err error
	if n.Body, err = publicText("body", n.Body, IncidentNoteMax, true); err != nil {
		return err
	}
	if n.Body == "" {
		return invalid("body", "must not be empty")
	}
	return nil
}

// StatusPageStore keeps status pages and incident notes.
type StatusPageStore interface {
	// StatusPageCreate stores a new page (validated), whose ID, project
	// and timestamps the caller has set. A slug in use by any project is
	// ErrConflict.
	StatusPageCreate(ctx context.Context, p *StatusPage) error
	StatusPageGet(ctx context.Context, projectID, id string) (*StatusPage, error)
	// StatusPageGetBySlug returns the page with the slug, of any project,
	// published or not.
	StatusPageGetBySlug(ctx context.Context, slug string) (*StatusPage, error)
	// StatusPageList returns the project's pages, by slug.
	StatusPageList(ctx context.Context, projectID string) ([]*StatusPage, error)
	// StatusPageModify loads a page under a lock, lets fn change it,
	// validates it and writes it; an error from fn is returned as is, and
	// nothing is written. A slug in use is ErrConflict.
	StatusPageModify(ctx context.Context, projectID, id string, fn func(p *StatusPage) error) (*StatusPage, error)
	StatusPageDelete(ctx context.Context, projectID, id string) error
	// IncidentNoteCreate stores a note (validated) on an incident of the
	// project: ErrNotFound when there is no such incident, a
	// ValidationError when it has IncidentNotesMax notes already.
	IncidentNoteCreate(ctx context.Context, n *IncidentNote) error
	// IncidentNoteList returns the notes of the project's incidents with
	// the IDs, oldest first, by incident ID.
	IncidentNoteList(ctx context.Context, projectID string, incidentIDs []string) (map[string][]*IncidentNote, error)
	IncidentNoteDelete(ctx context.Context, projectID, id string) error
}
