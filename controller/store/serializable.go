package store

import "google.golang.org/grpc"

// clientDialOptions are the gRPC options of every etcd client the controller makes.
func clientDialOptions() []grpc.DialOption { return nil }
