package client

import (
	"context"
	"errors"
	"io"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// The key services are made per call from the shared connection: they hold nothing but it.
func (c *Client) keys() jujupb.KeyServiceClient { return jujupb.NewKeyServiceClient(c.conn) }

func (c *Client) sshAgent() jujupb.SSHAgentServiceClient {
	return jujupb.NewSSHAgentServiceClient(c.conn)
}

// ListSSHKeys lists the model's authorized keys, Juju's internal ones left out.
func (c *Client) ListSSHKeys(ctx context.Context, model string) ([]*jujupb.SSHKey, error) {
	resp, err := invoke(ctx, c, c.keys().ListKeys, &jujupb.ListKeysRequest{Model: c.model(model)})
	if err != nil {
		return nil, err
	}
	return resp.GetKeys(), nil
}

// AddSSHKeys adds keys to the model: all of them, or none and an error.
func (c *Client) AddSSHKeys(ctx context.Context, model string, keys []string) error {
	_, err := invoke(ctx, c, c.keys().AddKeys, &jujupb.AddKeysRequest{Model: c.model(model), Keys: keys})
	return err
}

// RemoveSSHKeys removes the keys named by fingerprint, comment or whole key: all of them, or
// none and an error.
func (c *Client) RemoveSSHKeys(ctx context.Context, model string, ids []string) error {
	_, err := invoke(ctx, c, c.keys().RemoveKeys, &jujupb.RemoveKeysRequest{Model: c.model(model), Ids: ids})
	return err
}

// EnsureClientSSHKey adds the client's own public key to the model unless it is there, and
// returns the revision of the keys from which it is.
func (c *Client) EnsureClientSSHKey(ctx context.Context, model, key string) (*jujupb.EnsureClientKeyResponse, error) {
	return invoke(ctx, c, c.keys().EnsureClientKey, &jujupb.EnsureClientKeyRequest{Model: c.model(model), Key: key})
}

// SSHTarget resolves a machine, unit or "<application>/leader" to its machine's ssh server,
// once that serves the model's keys of at least keysRevision (bounded by ctx, or the
// client's timeout).
func (c *Client) SSHTarget(ctx context.Context, model, target string, keysRevision int64) (*jujupb.SSHTargetResponse, error) {
	return invoke(ctx, c, c.keys().SSHTarget, &jujupb.SSHTargetRequest{Model: c.model(model), Target: target, KeysRevision: keysRevision})
}

// WatchAuthorizedKeys calls fn with the model's keys, then again after each change, until ctx
// ends (nil), fn fails, or the stream breaks (its error). A machine agent calls it; it is
// bounded by ctx only.
func (c *Client) WatchAuthorizedKeys(ctx context.Context, model, machine string, fn func(*jujupb.AuthorizedKeys) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.sshAgent().WatchAuthorizedKeys(ctx, &jujupb.WatchAuthorizedKeysRequest{Model: c.model(model), MachineId: machine}, c.callOpts...)
	if err != nil {
		return c.mapErr(err)
	}
	for {
		keys, err := stream.Recv()
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return errors.New("watching ssh keys: the controller ended the stream")
		}
		if err != nil {
			return c.mapErr(err)
		}
		if err := fn(keys); err != nil {
			return err
		}
	}
}

// SetSSHHost records where a machine's ssh server listens (its agent calls it).
func (c *Client) SetSSHHost(ctx context.Context, req *jujupb.SetSSHHostRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.sshAgent().SetSSHHost, req)
	return err
}
