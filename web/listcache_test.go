package web

import (
	"reflect"
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
