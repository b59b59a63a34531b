package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"
)

// object is a JSON object as received, to tell a field set to null from a
// field left out.
type object map[string]json.RawMessage

// has reports whether the object has the field, null or not.
func (o object) has(name string) bool {
	_, ok := o[name]
	return ok
}

// isNull reports whether the field is present and null.
func (o object) isNull(name string) bool {
	v, ok := o[name]
	return ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// readBody reads the request body, at most h.bodyLimit bytes.
func (h *Handler) readBody(c echo.Context) ([]byte, error) {
	r := http.MaxBytesReader(c.Response(), c.Request().Body, h.bodyLimit)
	b, err := io.ReadAll(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, field: "body",
				msg: fmt.Sprintf("is larger than %d bytes", h.bodyLimit)}
		}
		return nil, &apiError{status: http.StatusBadRequest, field: "body", msg: "could not be read"}
	}
	return b, nil
}

// decodeBody reads the body and decodes it strictly into dst, a pointer to
// one of the request types: unknown fields, fields of the wrong type and
// anything but one JSON object are errors naming the field. readOnly lists
// the fields of the resource that a client may not set, to say so rather
// than call them unknown.
func (h *Handler) decodeBody(c echo.Context, dst any, readOnly []string) (object, error) {
	b, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b, dst, "", readOnly)
}

// decodeJSON decodes b strictly into dst; path prefixes the field names of
// errors.
func decodeJSON(b []byte, dst any, path string, readOnly []string) (object, error) {
	name := path
	if name == "" {
		name = "body"
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, invalidf(name, "must be a JSON object")
	}
	var syntax any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&syntax); err != nil {
		return nil, invalidf(name, "is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidf(name, "must be one JSON object, with nothing after it")
	}
	t := reflect.TypeOf(dst).Elem()
	if err := checkFields(b, t, path, readOnly); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return nil, typeError(err, path)
	}
	var obj object
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, invalidf(name, "must be a JSON object")
	}
	return obj, nil
}

// checkFields walks raw along type t and reports the first field that t
// does not have, with its path.
func checkFields(raw json.RawMessage, t reflect.Type, path string, readOnly []string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return invalidf(orBody(path), "must be a JSON object")
		}
		fields := jsonFields(t)
		for _, key := range sortedKeys(obj) {
			f, ok := fields[key]
			if !ok {
				for _, ro := range readOnly {
					if ro == key {
						return invalidf(join(path, key), "is read-only")
					}
				}
				return invalidf(join(path, key), "unknown field (fields: %s)", strings.Join(fieldNames(t), ", "))
			}
			if err := checkFields(obj[key], f.Type, join(path, key), nil); err != nil {
				return err
			}
		}
	case reflect.Slice:
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if elem.Kind() != reflect.Struct {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return invalidf(orBody(path), "must be a list")
		}
		for i, item := range items {
			if err := checkFields(item, elem, fmt.Sprintf("%s[%d]", path, i), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields returns the fields of struct t by JSON name, with those of
// embedded structs, as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := make(map[string]reflect.StructField)
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// fieldNames returns the JSON names of t's fields, in declaration order.
func fieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// typeError rewrites encoding/json's errors to name the field and say what
// it must be.
func typeError(err error, path string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// encoding/json names embedded structs by their Go names: drop them.
		var parts []string
		for _, p := range strings.Split(te.Field, ".") {
			if p != "" && !unicode.IsUpper(rune(p[0])) {
				parts = append(parts, p)
			}
		}
		field := join(path, strings.Join(parts, "."))
		if len(parts) == 0 {
			field = orBody(path)
		}
		return invalidf(field, "must be %s", describeType(te.Type))
	}
	return invalidf(orBody(path), "%s", strings.TrimPrefix(err.Error(), "json: "))
}

func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "JSON"
		}
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
