package apiserver

import (
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// resourceServer serves ResourceService: the files charms declare as resources.
type resourceServer struct {
	pb.UnimplementedResourceServiceServer
	*service
}
