package web

import (
	"html/template"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestRowKeyCoversEveryField changes each field of a list row, and each
// field of its times, one at a time: every change must change the row's
// cache key, or the list would show a stale row.
func TestRowKeyCoversEveryField(t *testing.T) {
	t.Parallel()
	base := func() *monitorRow {
		return &monitorRow{ID: "m1", Name: "job", Slug: "job", Tags: []string{"a"}, Status: monitors.StatusUp,
			Schedule: "every hour", Zone: "UTC", Next: &When{ISO: "i", Text: "t", Zone: "z", Rel: "r", Full: "f"},
			NextLabel: "expected", LastPing: &When{ISO: "i", Text: "t", Zone: "z", Rel: "r", Full: "f"},
			LastKind: monitors.PingSuccess, Spark: "<svg></svg>", Why: "why",
			Advice:  []monitors.Advice{{Field: "grace_seconds", Text: "short"}},
			Snoozed: &When{ISO: "i", Text: "t", Zone: "z", Rel: "r", Full: "f"}}
	}
	key := base().key()
	rt := reflect.TypeFor[monitorRow]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type == reflect.TypeFor[*When]() {
			for j := range reflect.TypeFor[When]().NumField() {
				r := base()
				w := reflect.ValueOf(r).Elem().Field(i).Elem().Field(j)
				change(t, w)
				require.NotEqual(t, key, r.key(), "%s.%s", f.Name, reflect.TypeFor[When]().Field(j).Name)
			}
			r := base()
			reflect.ValueOf(r).Elem().Field(i).SetZero()
			require.NotEqual(t, key, r.key(), "%s nil", f.Name)
			continue
		}
		r := base()
		change(t, reflect.ValueOf(r).Elem().Field(i))
		require.NotEqual(t, key, r.key(), f.Name)
	}
}

// change sets v to another value of its type.
func change(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		change(t, v.Index(v.Len()-1))
	case reflect.Struct:
		for i := range v.NumField() {
			change(t, v.Field(i))
		}
	default:
		t.Fatalf("a row field of kind %s: teach the test and monitorRow.key about it", v.Kind())
	}
}

func TestETagMatches(t *testing.T) {
	t.Parallel()
	tag := listETag([]byte("rows"), "q=a")
	require.NotEqual(t, tag, listETag([]byte("rows"), "q=b"), "the query is part of the tag")
	require.NotEqual(t, tag, listETag([]byte("rows!"), "q=a"))
	require.True(t, etagMatches(tag, tag))
	require.True(t, etagMatches(`"x", `+tag, tag))
	require.True(t, etagMatches("W/"+tag, tag))
	require.True(t, etagMatches("*", tag))
	require.False(t, etagMatches("", tag))
	require.False(t, etagMatches(`"x"`, tag))
}

// TestListSignatureCoversTheDraw changes each part of a page kept that
// the list draws, one at a time: every change must change the page's
// signature, or a draw of the page before would be served for it. A
// field added to MonitorPage or listEntry fails the test until it is
// either in the signature or said not to be drawn.
func TestListSignatureCoversTheDraw(t *testing.T) {
	t.Parallel()
	base := func() *listEntry {
		return &listEntry{Marker: "m", PageNo: 1, Pages: 2, Sparks: []template.HTML{"<svg>a</svg>", "<svg>b</svg>"},
			Page: &monitors.MonitorPage{Total: 3, Matched: 2, Tags: []string{"a", "b"},
				Counts:   map[monitors.Status]int{monitors.StatusUp: 2, monitors.StatusDown: 1},
				Monitors: []*monitors.Monitor{{ID: "m1"}, {ID: "m2"}}, Versions: []string{"v1", "v2"}}}
	}
	sig := base().signature()
	require.Equal(t, sig, base().signature())
	for name, fn := range map[string]func(e *listEntry){
		"PageNo":     func(e *listEntry) { e.PageNo = 2 },
		"Pages":      func(e *listEntry) { e.Pages = 3 },
		"Sparks":     func(e *listEntry) { e.Sparks[1] = "<svg>c</svg>" },
		"Total":      func(e *listEntry) { e.Page.Total = 4 },
		"Matched":    func(e *listEntry) { e.Page.Matched = 1 },
		"Tags":       func(e *listEntry) { e.Page.Tags = []string{"a"} },
		"Tags split": func(e *listEntry) { e.Page.Tags = []string{"ab"} },
		"Counts":     func(e *listEntry) { e.Page.Counts[monitors.StatusUp], e.Page.Counts[monitors.StatusLate] = 1, 1 },
		"Monitors":   func(e *listEntry) { e.Page.Monitors[1] = &monitors.Monitor{ID: "m3"} },
		"Monitors gone": func(e *listEntry) {
			e.Page.Monitors, e.Page.Versions, e.Sparks = e.Page.Monitors[:1], e.Page.Versions[:1], e.Sparks[:1]
		},
		"Versions": func(e *listEntry) { e.Page.Versions[0] = "v3" },
		"order": func(e *listEntry) {
			slices.Reverse(e.Page.Monitors)
			slices.Reverse(e.Page.Versions)
			slices.Reverse(e.Sparks)
		},
	} {
		e := base()
		fn(e)
		require.NotEqual(t, sig, e.signature(), name)
	}
	// Not drawn: the marker and the instant the page was computed, and
	// LateAt, which says until when the page holds (listEntry.validAt).
	notDrawn := []string{"Marker", "At", "Sig", "LateAt"}
	for _, typ := range []reflect.Type{reflect.TypeFor[listEntry](), reflect.TypeFor[monitors.MonitorPage]()} {
		for i := range typ.NumField() {
			name := typ.Field(i).Name
			if !slices.Contains(notDrawn, name) && name != "Page" {
				require.Contains(t, []string{"PageNo", "Pages", "Sparks", "Total", "Matched", "Tags", "Counts", "Monitors", "Versions"}, name,
					"%s.%s: in the signature, or not drawn", typ.Name(), name)
			}
		}
	}
}
