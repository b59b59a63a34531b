package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// FormBodyLimit is the largest body of a dashboard form: room for a
// channel's 64 KiB template, URL-encoded, and the rest of its fields.
const FormBodyLimit = 256 << 10

// formLimit reads the form of every request that changes state, at most
// FormBodyLimit bytes of it, before anything else looks at it (the CSRF
// check, the sign-in and setup handlers): a larger body is refused with
// 413 as soon as its size is known, and is never read past the limit.
func (h *Handler) formLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if safeMethod(req.Method) {
			return next(c)
		}
		if err := readForm(c.Response(), req); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return h.renderError(c, http.StatusRequestEntityTooLarge,
					fmt.Sprintf("This form is larger than %d KiB, so it was refused.", FormBodyLimit>>10))
			}
			return h.renderError(c, http.StatusBadRequest, "The form could not be read.")
		}
		return next(c)
	}
}

// readForm parses req's form, URL-encoded or multipart, reading at most
// FormBodyLimit bytes of its body.
func readForm(w http.ResponseWriter, req *http.Request) error {
	if req.ContentLength > FormBodyLimit {
		return &http.MaxBytesError{Limit: FormBodyLimit}
	}
	if req.Body != nil {
		req.Body = http.MaxBytesReader(w, req.Body, FormBodyLimit)
	}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "multipart/form-data") {
		return req.ParseMultipartForm(FormBodyLimit)
	}
	return req.ParseForm()
}
