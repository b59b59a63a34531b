package web

// ForgetRows empties the monitor list's caches (rows, sparklines, pages), so that a
// benchmark can measure a refresh in which every row changed.
func (h *Handler) ForgetRows() { h.rowCache.purge() }
