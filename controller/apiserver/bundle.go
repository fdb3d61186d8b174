package apiserver

import (
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// bundleServer serves BundleService: the model as bundles see it, and annotations.
type bundleServer struct {
	pb.UnimplementedBundleServiceServer
	*service
}
