package ingest

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Mount adds every ping route to e: GET, HEAD and POST under /ping/.
func (s *Service) Mount(e *echo.Echo) {
	e.Match([]string{http.MethodGet, http.MethodHead, http.MethodPost}, "/ping/*", s.ping)
}
