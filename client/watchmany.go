package client

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/status"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// WatchStream carries many agents' watches on one stream (StatusService.WatchMany): the agents
// of one agent host then cost the controller one stream instead of one each. It is opened with
// one agent's credentials; every watch added brings its own agent's.
type WatchStream struct {
	c      *Client
	cancel context.CancelFunc
	sendMu sync.Mutex
	stream interface {
		Send(*jujupb.WatchManyRequest) error
		Recv() (*jujupb.WatchManyEvent, error)
	}
}

// WatchMany opens a stream of watches, until ctx ends or Close. It is not bounded by the
// per-call timeout.
func (c *Client) WatchMany(ctx context.Context) (*WatchStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.status.WatchMany(ctx, c.callOpts...)
	if err != nil {
		cancel()
		return nil, c.mapErr(err)
	}
	return &WatchStream{c: c, cancel: cancel, stream: stream}, nil
}

// Add asks for a watch of req made as as's agent, under id (unique on the stream until the
// watch ends). Its establishment, events or end come through Recv.
func (w *WatchStream) Add(id int64, as *Client, req *jujupb.WatchRequest) error {
	req.Model = as.model(req.GetModel())
	return w.send(&jujupb.WatchManyRequest{Id: id, Watch: req, Tag: as.cfg.Tag, Password: as.cfg.Password})
}

// Remove ends watch id; nothing more comes for it.
func (w *WatchStream) Remove(id int64) error {
	return w.send(&jujupb.WatchManyRequest{Id: id})
}

func (w *WatchStream) send(req *jujupb.WatchManyRequest) error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	if err := w.stream.Send(req); err != nil {
		return w.c.mapErr(err)
	}
	return nil
}

// Recv blocks until news of one of the stream's watches. When the stream ends it returns an
// error: context.Canceled after Close, or the server's, mapped to the apierr sentinels.
func (w *WatchStream) Recv() (*jujupb.WatchManyEvent, error) {
	ev, err := w.stream.Recv()
	if err != nil {
		return nil, w.c.streamErr(err)
	}
	return ev, nil
}

// Close ends the stream and every watch on it.
func (w *WatchStream) Close() { w.cancel() }

// WatchEndError decodes why a watch of a WatchStream ended, as the error a Watch call would
// have returned (errors.Is matches the apierr sentinels).
func (w *WatchStream) WatchEndError(ev *jujupb.WatchManyEvent) error {
	st := &status.Status{}
	if err := proto.Unmarshal(ev.GetError(), st); err != nil || st.GetCode() == 0 {
		return fmt.Errorf("watch %d ended without a reason", ev.GetId())
	}
	return w.c.mapErr(grpcstatus.FromProto(st).Err())
}
