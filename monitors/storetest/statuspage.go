package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func runStatusPages(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	t.Run("StatusPage/CRUD", func(t *testing.T) {
		t.Parallel()
		testStatusPageCRUD(t, setup(t, newStore))
	})
	t.Run("IncidentNote", func(t *testing.T) {
		t.Parallel()
		testIncidentNotes(t, setup(t, newStore))
	})
}

func testStatusPageCRUD(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "backup", nil)
	p := &monitors.StatusPage{ID: RandomID("sp"), ProjectID: b.prj.ID, Slug: "acme", Title: " Acme jobs ",
		Items: []monitors.StatusPageItem{{Monitor: m.ID, Name: "Nightly backup"}, {Tag: "db"}}, CreatedAt: T0, UpdatedAt: T0}
	require.NoError(t, s.StatusPageCreate(ctx, p))
	require.Equal(t, "Acme jobs", p.Title, "trimmed")

	got, err := s.StatusPageGet(ctx, b.prj.ID, p.ID)
	require.NoError(t, err)
	require.Equal(t, p, got)
	got, err = s.StatusPageGetBySlug(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, p, got)
	_, err = s.StatusPageGetBySlug(ctx, "nope")
	require.ErrorIs(t, err, monitors.ErrNotFound)

	// Invalid pages are refused; nothing is stored.
	bad := *p
	bad.ID, bad.Slug = RandomID("sp"), "Bad Slug"
	var ve *monitors.ValidationError
	require.ErrorAs(t, s.StatusPageCreate(ctx, &bad), &ve)
	require.Equal(t, "slug", ve.Field)

	// A slug is unique across projects.
	other := MustProject(t, s)
	dup := &monitors.StatusPage{ID: RandomID("sp"), ProjectID: other.ID, Slug: "acme", Title: "x", CreatedAt: T0, UpdatedAt: T0}
	require.ErrorIs(t, s.StatusPageCreate(ctx, dup), monitors.ErrConflict)
	_, err = s.StatusPageGet(ctx, other.ID, p.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound, "another project's page")

	second := &monitors.StatusPage{ID: RandomID("sp"), ProjectID: b.prj.ID, Slug: "a-second", Title: "Second", CreatedAt: T0, UpdatedAt: T0}
	require.NoError(t, s.StatusPageCreate(ctx, second))
	list, err := s.StatusPageList(ctx, b.prj.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{"a-second", "acme"}, []string{list[0].Slug, list[1].Slug}, "by slug")

	// Modify: the slug moves with the document; a bad change writes nothing.
	mod, err := s.StatusPageModify(ctx, b.prj.ID, p.ID, func(p *monitors.StatusPage) error {
		p.Slug, p.Published, p.UpdatedAt = "acme-status", true, T0.Add(time.Hour)
		return nil
	})
	require.NoError(t, err)
	require.True(t, mod.Published)
	got, err = s.StatusPageGetBySlug(ctx, "acme-status")
	require.NoError(t, err)
	require.Equal(t, mod, got)
	_, err = s.StatusPageGetBySlug(ctx, "acme")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.StatusPageModify(ctx, b.prj.ID, p.ID, func(p *monitors.StatusPage) error { p.Title = ""; return nil })
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "title", ve.Field)
	_, err = s.StatusPageModify(ctx, b.prj.ID, p.ID, func(p *monitors.StatusPage) error { p.Slug = "a-second"; return nil })
	require.ErrorIs(t, err, monitors.ErrConflict)
	got, err = s.StatusPageGet(ctx, b.prj.ID, p.ID)
	require.NoError(t, err)
	require.Equal(t, mod, got, "unchanged")
	_, err = s.StatusPageModify(ctx, other.ID, p.ID, func(*monitors.StatusPage) error { return nil })
	require.ErrorIs(t, err, monitors.ErrNotFound)

	require.ErrorIs(t, s.StatusPageDelete(ctx, other.ID, p.ID), monitors.ErrNotFound)
	require.NoError(t, s.StatusPageDelete(ctx, b.prj.ID, p.ID))
	require.ErrorIs(t, s.StatusPageDelete(ctx, b.prj.ID, p.ID), monitors.ErrNotFound)
	_, err = s.StatusPageGetBySlug(ctx, "acme-status")
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testIncidentNotes(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	MustRecord(t, s, Ping(m, monitors.PingFail, T0), Ping(m, monitors.PingSuccess, T0.Add(time.Minute)), Ping(m, monitors.PingFail, T0.Add(2*time.Minute)))
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 2)

	n1 := &monitors.IncidentNote{ID: RandomID("n"), ProjectID: b.prj.ID, IncidentID: ins[1].ID, Body: " Disk full; cleaned up.\nRe-run at 09:10. ", CreatedAt: T0.Add(2 * time.Hour)}
	n0 := &monitors.IncidentNote{ID: RandomID("n"), ProjectID: b.prj.ID, IncidentID: ins[1].ID, Body: "Looking into it", CreatedAt: T0.Add(time.Hour)}
	n2 := &monitors.IncidentNote{ID: RandomID("n"), ProjectID: b.prj.ID, IncidentID: ins[0].ID, Body: "Known", CreatedAt: T0.Add(3 * time.Hour)}
	for _, n := range []*monitors.IncidentNote{n1, n0, n2} {
		require.NoError(t, s.IncidentNoteCreate(ctx, n))
	}
	require.Equal(t, "Disk full; cleaned up.\nRe-run at 09:10.", n1.Body, "trimmed, newline kept")

	got, err := s.IncidentNoteList(ctx, b.prj.ID, []string{ins[0].ID, ins[1].ID})
	require.NoError(t, err)
	require.Equal(t, map[string][]*monitors.IncidentNote{ins[1].ID: {n0, n1}, ins[0].ID: {n2}}, got, "oldest first")
	got, err = s.IncidentNoteList(ctx, b.prj.ID, nil)
	require.NoError(t, err)
	require.Empty(t, got)

	// Another project's incident, an unknown one, a bad body: refused.
	other := MustProject(t, s)
	err = s.IncidentNoteCreate(ctx, &monitors.IncidentNote{ID: RandomID("n"), ProjectID: other.ID, IncidentID: ins[0].ID, Body: "x", CreatedAt: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	got, err = s.IncidentNoteList(ctx, other.ID, []string{ins[0].ID})
	require.NoError(t, err)
	require.Empty(t, got, "another project sees no notes")
	var ve *monitors.ValidationError
	err = s.IncidentNoteCreate(ctx, &monitors.IncidentNote{ID: RandomID("n"), ProjectID: b.prj.ID, IncidentID: ins[0].ID, Body: "bell \a", CreatedAt: T0})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "body", ve.Field)

	require.ErrorIs(t, s.IncidentNoteDelete(ctx, other.ID, n2.ID), monitors.ErrNotFound)
	require.NoError(t, s.IncidentNoteDelete(ctx, b.prj.ID, n2.ID))
	got, err = s.IncidentNoteList(ctx, b.prj.ID, []string{ins[0].ID})
	require.NoError(t, err)
	require.Empty(t, got)

	// Notes go with their monitor's history.
	require.NoError(t, s.MonitorDelete(ctx, b.prj.ID, m.ID))
	got, err = s.IncidentNoteList(ctx, b.prj.ID, []string{ins[1].ID})
	require.NoError(t, err)
	require.Empty(t, got)
}
