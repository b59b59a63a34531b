package manage

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// APIKeyNameMax is the longest name of an API key, in characters.
const APIKeyNameMax = 200

// APIKeyCreateParams are what a person gives for a new API key.
type APIKeyCreateParams struct {
	ProjectID string
	// Name says what the key is for; surrounding spaces are dropped.
	Name     string
	ReadOnly bool
}

// APIKeyCreate makes an API key of the project and returns it with the
// key itself, which is shown this once: only its hash is stored. A name
// that is empty or longer than APIKeyNameMax is a
// *monitors.ValidationError of the field "name".
func (s *Service) APIKeyCreate(ctx context.Context, p *APIKeyCreateParams) (*monitors.APIKey, string, error) {
	name := strings.TrimSpace(p.Name)
	if name == "" || utf8.RuneCountInString(name) > APIKeyNameMax {
		return nil, "", &monitors.ValidationError{Field: "name",
			Message: fmt.Sprintf("say what the key is for, in at most %d characters", APIKeyNameMax)}
	}
	raw, prefix, hash := keys.NewAPIKey()
	k, err := s.store.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: keys.NewID(), ProjectID: p.ProjectID,
		Name: name, Prefix: prefix, Hash: hash, ReadOnly: p.ReadOnly, Now: s.now()})
	if err != nil {
		return nil, "", fmt.Errorf("create API key: %w", err)
	}
	return k, raw, nil
}

// APIKeyRevoke revokes the project's API key id: requests with it are
// refused from now on.
func (s *Service) APIKeyRevoke(ctx context.Context, projectID, id string) error {
	if err := s.store.APIKeyRevoke(ctx, projectID, id, s.now()); err != nil {
		return fmt.Errorf("revoke API key: %w", err)
	}
	return nil
}
