package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/labstack/echo/v4"
)

// queryParam is a query parameter of a route.
type queryParam struct{ name, typ, doc string }

// routeDoc is what the OpenAPI document says of a route beyond its path.
type routeDoc struct {
	query    []queryParam
	body     any // the request body type, nil for none
	response any // the success body type, nil for none
	status   int // the success status; 0 is 200
	extra    []int
}

// OpenAPI returns the OpenAPI 3 document of the API, built from the route
// table and the request and response types.
func (h *Handler) OpenAPI() (*openapi3.T, error) {
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{Title: "Vigil management API", Version: "1",
			Description: "The management API of Vigil (PROTOCOL.md §2). Authenticate with Authorization: Bearer <key> or X-Api-Key: <key>; read-only keys may only GET. Errors are {\"error\": \"...\", \"field\": \"...\"}."},
		Servers: openapi3.Servers{{URL: "/"}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas: openapi3.Schemas{},
			SecuritySchemes: openapi3.SecuritySchemes{
				"bearer": {Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer")},
				"apiKey": {Value: openapi3.NewSecurityScheme().WithType("apiKey").WithIn("header").WithName("X-Api-Key")},
			},
			Responses: openapi3.ResponseBodies{},
		},
	}
	ref := func(v any) (*openapi3.SchemaRef, error) {
		t := reflect.TypeOf(v)
		if t.Kind() != reflect.Struct {
			s, err := schemaOf(v)
			return s, err
		}
		s, ok := doc.Components.Schemas[t.Name()]
		if !ok {
			var err error
			if s, err = schemaOf(v); err != nil {
				return nil, err
			}
			doc.Components.Schemas[t.Name()] = s
		}
		return openapi3.NewSchemaRef("#/components/schemas/"+t.Name(), s.Value), nil
	}
	errRef, err := ref(Error{})
	if err != nil {
		return nil, err
	}
	errorResponse := func(status int) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(strings.ToLower(http.StatusText(status))).
			WithContent(openapi3.NewContentWithJSONSchemaRef(errRef))}
	}
	for _, r := range h.routes {
		if !strings.HasPrefix(r.path, "/api/v1/") {
			continue // badges are images, outside the API
		}
		op := openapi3.NewOperation()
		op.Summary = r.summary
		op.OperationID = operationID(r.method, r.path)
		op.Responses = openapi3.NewResponses()
		op.Responses.Delete("default")
		for _, p := range pathParams(r.path) {
			op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: openapi3.NewPathParameter(p).
				WithSchema(openapi3.NewStringSchema())})
		}
		for _, q := range r.doc.query {
			s := openapi3.NewStringSchema()
			switch q.typ {
			case "integer":
				s = openapi3.NewIntegerSchema()
			case "boolean":
				s = openapi3.NewBoolSchema()
			}
			op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(q.name).
				WithDescription(q.doc).WithSchema(s)})
		}
		errs := slices.Clone(r.doc.extra)
		if r.access != public {
			op.Security = &openapi3.SecurityRequirements{{"bearer": {}}, {"apiKey": {}}}
			errs = append(errs, http.StatusUnauthorized)
		}
		if r.access == write {
			errs = append(errs, http.StatusForbidden)
		}
		if len(r.doc.query) > 0 || r.doc.body != nil {
			errs = append(errs, http.StatusBadRequest)
		}
		if len(pathParams(r.path)) > 0 {
			errs = append(errs, http.StatusNotFound)
		}
		if r.doc.body != nil {
			body, err := ref(r.doc.body)
			if err != nil {
				return nil, err
			}
			op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
				WithJSONSchemaRef(body)}
			errs = append(errs, http.StatusRequestEntityTooLarge)
		}
		if r.method != http.MethodGet {
			errs = append(errs, http.StatusConflict)
		}
		status := r.doc.status
		if status == 0 {
			status = http.StatusOK
		}
		resp := openapi3.NewResponse().WithDescription(strings.ToLower(http.StatusText(status)))
		if r.doc.response != nil {
			body, err := ref(r.doc.response)
			if err != nil {
				return nil, err
			}
			resp.WithContent(openapi3.NewContentWithJSONSchemaRef(body))
		}
		op.Responses.Set(fmt.Sprint(status), &openapi3.ResponseRef{Value: resp})
		slices.Sort(errs)
		for _, s := range slices.Compact(errs) {
			op.Responses.Set(fmt.Sprint(s), errorResponse(s))
		}
		doc.AddOperation(OpenAPIPath(r.path), r.method, op)
	}
	return doc, nil
}

// openAPI answers GET /api/v1/openapi.json.
func (h *Handler) openAPI(c echo.Context, _ *request) error {
	h.docOnce.Do(func() {
		doc, err := h.OpenAPI()
		if err != nil {
			h.docErr = err
			return
		}
		h.doc, h.docErr = json.MarshalIndent(doc, "", "  ")
	})
	if h.docErr != nil {
		return h.docErr
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, h.doc)
}

var paramRE = regexp.MustCompile(`:([a-z_]+)`)

// OpenAPIPath turns an echo path (/monitors/:id) into OpenAPI's form
// (/monitors/{id}).
func OpenAPIPath(path string) string { return paramRE.ReplaceAllString(path, "{$1}") }

func pathParams(path string) []string {
	var out []string
	for _, m := range paramRE.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// operationID names an operation after its method and path:
// GET /api/v1/monitors/:id/pings is getMonitorsIdPings.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api/v1/"), "/") {
		seg = strings.TrimPrefix(seg, ":")
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '_' || r == '.' || r == '-' }) {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// schemaOf generates the JSON schema of v's type, reading the doc, enum and
// required struct tags. Objects allow no other properties: the API rejects
// unknown fields, and sends none it does not document.
func schemaOf(v any) (*openapi3.SchemaRef, error) {
	s, err := openapi3gen.NewSchemaRefForValue(v, nil, openapi3gen.SchemaCustomizer(customizeSchema))
	if err != nil {
		return nil, fmt.Errorf("schema of %T: %w", v, err)
	}
	return s, nil
}

func customizeSchema(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	if d := tag.Get("doc"); d != "" {
		s.Description = d
	}
	if e := tag.Get("enum"); e != "" {
		for _, v := range strings.Split(e, ",") {
			s.Enum = append(s.Enum, v)
		}
	}
	if tag.Get("nullable") == "true" {
		s.Nullable = true
		if len(s.Enum) > 0 {
			s.Enum = append(s.Enum, nil)
		}
	}
	if t.Kind() == reflect.Struct && t != timeType && s.Properties != nil {
		no := false
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if f.Tag.Get("required") == "true" || !strings.Contains(opts, "omitempty") {
				s.Required = append(s.Required, name)
			}
		}
	}
	return nil
}
