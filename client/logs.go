package client

import (
	"context"
	"errors"
	"io"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// LogStream is a receive-only stream of model log records, from DebugLog.
type LogStream struct {
	c      *Client
	stream interface {
		Recv() (*jujupb.LogRecord, error)
	}
	cancel context.CancelFunc
}

// DebugLog streams the model's log: the backlog req asks for, then (unless NoTail) new records
// until ctx is cancelled or Close is called. It is not bounded by the per-call timeout. Read
// records with Next.
func (c *Client) DebugLog(ctx context.Context, req *jujupb.DebugLogRequest) (*LogStream, error) {
	req.Model = c.model(req.GetModel())
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.log.DebugLog(ctx, req, c.callOpts...)
	if err != nil {
		cancel()
		return nil, c.mapErr(err)
	}
	// The server sends its header once the follow is in place (or fails before): waiting for it
	// reports a bad request here, and means every record written after DebugLog returns is seen.
	md, err := stream.Header()
	if err != nil {
		cancel()
		return nil, c.mapErr(err)
	}
	if md == nil {
		// The stream ended without a header: its status, read by Recv, says why.
		if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
			cancel()
			if err == nil {
				err = errors.New("log stream sent records before its header")
			}
			return nil, c.mapErr(err)
		}
		return &LogStream{c: c, stream: ended{}, cancel: cancel}, nil
	}
	return &LogStream{c: c, stream: stream, cancel: cancel}, nil
}

// ended is a stream that is over.
type ended struct{}

func (ended) Recv() (*jujupb.LogRecord, error) { return nil, io.EOF }

// Next blocks until the next record. It returns io.EOF when the server ends the stream (after
// the backlog with NoTail), context.Canceled after Close or when ctx is cancelled, and otherwise
// the server's error mapped to the apierr sentinels.
func (s *LogStream) Next() (*jujupb.LogRecord, error) {
	r, err := s.stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, s.c.streamErr(err)
	}
	return r, nil
}

// Close ends the stream.
func (s *LogStream) Close() { s.cancel() }
