package main

import (
	"fmt"
	"strconv"

	"github.com/vigilhq/vigil/api"
)

// apiSettings lists the settings of the management API under /api/v1, /metrics and badges.
func apiSettings(c *api.Config) []setting {
	return []setting{
		{"VIGIL_API_BODY_LIMIT", "api-body-limit", "1048576", "largest request body of the management API, in bytes",
			func(s string) error {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil || v < 1024 || v > 1<<30 {
					return fmt.Errorf("%q is not a number of bytes between 1024 and %d", s, 1<<30)
				}
				c.BodyLimit = v
				return nil
			}},
	}
}
