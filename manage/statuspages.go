package manage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// StatusPageFields are what a person sets of a status page. Nil keeps a
// field as it is (on a new page: its zero value; slug and title are
// required).
type StatusPageFields struct {
	Slug      *string
	Title     *string
	Published *bool
	// Items replace the page's items: the monitors (by ID, each of the
	// project) and tags it shows, in order, with their public names.
	Items *[]monitors.StatusPageItem
}

// StatusPageCreate makes a status page of the project, unpublished unless
// f says otherwise. Bad fields are a *monitors.ValidationError naming the
// field, a slug in use (by any project) among them.
func (s *Service) StatusPageCreate(ctx context.Context, projectID string, f *StatusPageFields) (*monitors.StatusPage, error) {
	if f.Slug == nil {
		return nil, &monitors.ValidationError{Field: "slug", Message: "is required"}
	}
	if f.Title == nil {
		return nil, &monitors.ValidationError{Field: "title", Message: "is required"}
	}
	now := s.now().UTC()
	p := &monitors.StatusPage{ID: keys.NewID(), ProjectID: projectID, Items: []monitors.StatusPageItem{}, CreatedAt: now, UpdatedAt: now}
	if err := s.applyStatusPage(ctx, p, f); err != nil {
		return nil, err
	}
	if err := s.store.StatusPageCreate(ctx, p); err != nil {
		return nil, slugTaken(p.Slug, err)
	}
	return p, nil
}

// StatusPageChange changes the project's page id as f says, in one
// transaction; bad fields change nothing.
func (s *Service) StatusPageChange(ctx context.Context, projectID, id string, f *StatusPageFields) (*monitors.StatusPage, error) {
	now := s.now().UTC()
	var slug string
	p, err := s.store.StatusPageModify(ctx, projectID, id, func(p *monitors.StatusPage) error {
		if err := s.applyStatusPage(ctx, p, f); err != nil {
			return err
		}
		p.UpdatedAt, slug = now, p.Slug
		return nil
	})
	if err != nil {
		return nil, slugTaken(slug, err)
	}
	return p, nil
}

// StatusPageDelete deletes a page of the project: its URL answers 404 at
// once.
func (s *Service) StatusPageDelete(ctx context.Context, projectID, id string) error {
	return s.store.StatusPageDelete(ctx, projectID, id)
}

// applyStatusPage sets f on p and validates it, checking that the monitors
// it names are the project's.
func (s *Service) applyStatusPage(ctx context.Context, p *monitors.StatusPage, f *StatusPageFields) error {
	if f.Slug != nil {
		p.Slug = strings.TrimSpace(*f.Slug)
	}
	if f.Title != nil {
		p.Title = *f.Title
	}
	if f.Published != nil {
		p.Published = *f.Published
	}
	if f.Items != nil {
		p.Items = append([]monitors.StatusPageItem{}, *f.Items...)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	for i, it := range p.Items {
		if it.Monitor == "" {
			continue
		}
		if _, err := s.store.MonitorGet(ctx, p.ProjectID, it.Monitor); errors.Is(err, monitors.ErrNotFound) {
			return &monitors.ValidationError{Field: fmt.Sprintf("items[%d].monitor", i), Message: fmt.Sprintf("no monitor %q in this project", it.Monitor)}
		} else if err != nil {
			return fmt.Errorf("check monitor %s: %w", it.Monitor, err)
		}
	}
	return nil
}

// slugTaken makes a slug conflict a validation error of the field.
func slugTaken(slug string, err error) error {
	if errors.Is(err, monitors.ErrConflict) {
		return &monitors.ValidationError{Field: "slug", Message: fmt.Sprintf("%q is the slug of another status page", slug)}
	}
	return err
}

// IncidentNoteAdd attaches a person's note to an incident of the project;
// status pages showing its monitor show the note, and their feeds carry
// it. A body that is empty, longer than monitors.IncidentNoteMax
// characters or holds control characters is a *monitors.ValidationError of
// the field "body"; an incident of another project is monitors.ErrNotFound.
func (s *Service) IncidentNoteAdd(ctx context.Context, projectID, incidentID, body string) (*monitors.IncidentNote, error) {
	n := &monitors.IncidentNote{ID: keys.NewID(), ProjectID: projectID, IncidentID: incidentID, Body: body,
		CreatedAt: s.now().UTC()}
	if err := s.store.IncidentNoteCreate(ctx, n); err != nil {
		return nil, err
	}
	return n, nil
}

// IncidentNoteDelete deletes a note of the project.
func (s *Service) IncidentNoteDelete(ctx context.Context, projectID, id string) error {
	return s.store.IncidentNoteDelete(ctx, projectID, id)
}
