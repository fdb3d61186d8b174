package client

import (
	"context"
	"math"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// NameKind says which names CompleteNames lists.
type NameKind = jujupb.NameKind

// Kinds of names for CompleteNames.
const (
	NameApplication = jujupb.NameKind_NAME_KIND_APPLICATION
	NameUnit        = jujupb.NameKind_NAME_KIND_UNIT
	NameMachine     = jujupb.NameKind_NAME_KIND_MACHINE
	NameModel       = jujupb.NameKind_NAME_KIND_MODEL
	// NameEndpoint lists "app:endpoint"; the prefix must hold the "app:" part.
	NameEndpoint = jujupb.NameKind_NAME_KIND_ENDPOINT
	// NameConfigKey lists "app:option"; the prefix must hold the "app:" part.
	NameConfigKey = jujupb.NameKind_NAME_KIND_CONFIG_KEY
)

// CompleteNames lists the names of one kind that start with prefix, sorted naturally, for shell
// completion: at most limit of them (0: the server's default, 1000) and whether more matched.
// The model is ignored for NameModel. The controller answers from one bounded read, never a
// full status, so a short deadline on ctx is enough.
func (c *Client) CompleteNames(ctx context.Context, model string, kind NameKind, prefix string, limit int) ([]string, bool, error) {
	req := &jujupb.CompleteNamesRequest{Kind: kind, Prefix: prefix, Limit: int32(min(max(limit, 0), math.MaxInt32))}
	if kind != NameModel {
		req.Model = c.model(model)
	}
	resp, err := invoke(ctx, c, jujupb.NewCompletionServiceClient(c.conn).CompleteNames, req)
	if err != nil {
		return nil, false, err
	}
	return resp.GetNames(), resp.GetTruncated(), nil
}
