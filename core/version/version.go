// Package version is the one version number of the CLI, the controller and the agents.
package version

// Current is the release version; the build may override it with -ldflags -X.
var Current = "0.1.0"
