package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vigilhq/vigil/monitors"
)

// Status pages and incident notes are stored whole, as JSON documents:
// what a page shows is decided where it is rendered, never in SQL.

func scanStatusPage(r Row) (*monitors.StatusPage, error) {
	var doc string
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	p := &monitors.StatusPage{}
	if err := json.Unmarshal([]byte(doc), p); err != nil {
		return nil, fmt.Errorf("read status page: %w", err)
	}
	return p, nil
}

func statusPageDoc(p *monitors.StatusPage) (string, error) {
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode status page: %w", err)
	}
	return string(b), nil
}

// StatusPageCreate stores a new page after validating it.
func (s *Scripts) StatusPageCreate(ctx context.Context, p *monitors.StatusPage) error {
	if err := p.Validate(); err != nil {
		return err
	}
	doc, err := statusPageDoc(p)
	if err != nil {
		return err
	}
	if _, err := s.w().Exec(ctx, s.Q.StatusPageInsert, p.ID, p.ProjectID, p.Slug, doc); err != nil {
		return fmt.Errorf("create status page: %w", err)
	}
	return nil
}

// StatusPageGet returns one page of the project.
func (s *Scripts) StatusPageGet(ctx context.Context, projectID, id string) (*monitors.StatusPage, error) {
	return wrap(One(ctx, s.r(), scanStatusPage, s.Q.StatusPageGet, projectID, id))("get status page %s", id)
}

// StatusPageGetBySlug returns the page with the slug, of any project.
func (s *Scripts) StatusPageGetBySlug(ctx context.Context, slug string) (*monitors.StatusPage, error) {
	return wrap(One(ctx, s.r(), scanStatusPage, s.Q.StatusPageGetBySlug, slug))("get status page %q", slug)
}

// StatusPageList returns the project's pages, by slug.
func (s *Scripts) StatusPageList(ctx context.Context, projectID string) ([]*monitors.StatusPage, error) {
	ps, err := All(ctx, s.r(), scanStatusPage, s.Q.StatusPageList, projectID)
	if err != nil {
		return nil, fmt.Errorf("list status pages: %w", err)
	}
	return ps, nil
}

// StatusPageModify changes a page under a lock; fn's change is validated
// before it is written, and its ID, project and creation time kept.
func (s *Scripts) StatusPageModify(ctx context.Context, projectID, id string, fn func(p *monitors.StatusPage) error) (*monitors.StatusPage, error) {
	var p *monitors.StatusPage
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		if p, err = One(ctx, tx, scanStatusPage, s.Q.StatusPageLock, projectID, id); err != nil {
			return fmt.Errorf("modify status page %s: %w", id, err)
		}
		created := p.CreatedAt
		if err := fn(p); err != nil {
			return &fnError{err}
		}
		p.ID, p.ProjectID, p.CreatedAt = id, projectID, created
		if err := p.Validate(); err != nil {
			return &fnError{err}
		}
		doc, err := statusPageDoc(p)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.Q.StatusPageUpdate, projectID, id, p.Slug, doc); err != nil {
			return fmt.Errorf("modify status page %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, wrapUnlessFn(err, "modify status page")
	}
	return p, nil
}

// StatusPageDelete deletes a page of the project.
func (s *Scripts) StatusPageDelete(ctx context.Context, projectID, id string) error {
	n, err := s.w().Exec(ctx, s.Q.StatusPageDelete, projectID, id)
	if err != nil {
		return fmt.Errorf("delete status page %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete status page %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

func scanNote(r Row) (*monitors.IncidentNote, error) {
	var doc string
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	n := &monitors.IncidentNote{}
	if err := json.Unmarshal([]byte(doc), n); err != nil {
		return nil, fmt.Errorf("read incident note: %w", err)
	}
	return n, nil
}

// IncidentNoteCreate stores a note on an incident of the project, in one
// transaction with the checks that the incident is the project's and has
// room for it.
func (s *Scripts) IncidentNoteCreate(ctx context.Context, n *monitors.IncidentNote) error {
	if err := n.Validate(); err != nil {
		return err
	}
	n.CreatedAt = n.CreatedAt.UTC()
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode incident note: %w", err)
	}
	err = s.Driver.InTx(ctx, func(tx Tx) error {
		ok, err := One(ctx, tx, scalar[bool], s.Q.IncidentExists, n.ProjectID, n.IncidentID)
		if err != nil {
			return fmt.Errorf("find incident %s: %w", n.IncidentID, err)
		}
		if !ok {
			return fmt.Errorf("incident %s: %w", n.IncidentID, monitors.ErrNotFound)
		}
		count, err := One(ctx, tx, scalar[int64], s.Q.NoteCount, n.IncidentID)
		if err != nil {
			return fmt.Errorf("count incident notes: %w", err)
		}
		if count >= monitors.IncidentNotesMax {
			return &fnError{&monitors.ValidationError{Field: "body",
				Message: fmt.Sprintf("the incident has %d notes, the most it may have", count)}}
		}
		if _, err := tx.Exec(ctx, s.Q.NoteInsert, n.ID, n.ProjectID, n.IncidentID, string(b)); err != nil {
			return fmt.Errorf("insert incident note: %w", err)
		}
		return nil
	})
	return wrapUnlessFn(err, "create incident note")
}

// IncidentNoteList returns the notes of the incidents, oldest first.
func (s *Scripts) IncidentNoteList(ctx context.Context, projectID string, incidentIDs []string) (map[string][]*monitors.IncidentNote, error) {
	out := map[string][]*monitors.IncidentNote{}
	if len(incidentIDs) == 0 {
		return out, nil
	}
	ns, err := All(ctx, s.r(), scanNote, s.Q.NoteList, projectID, incidentIDs)
	if err != nil {
		return nil, fmt.Errorf("list incident notes: %w", err)
	}
	slices.SortStableFunc(ns, func(a, b *monitors.IncidentNote) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, n := range ns {
		out[n.IncidentID] = append(out[n.IncidentID], n)
	}
	return out, nil
}

// IncidentNoteDelete deletes a note of the project.
func (s *Scripts) IncidentNoteDelete(ctx context.Context, projectID, id string) error {
	n, err := s.w().Exec(ctx, s.Q.NoteDelete, projectID, id)
	if err != nil {
		return fmt.Errorf("delete incident note %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete incident note %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}
