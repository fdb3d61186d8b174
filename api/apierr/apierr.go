// Package apierr holds the sentinel errors that cross the wire, and the one table that maps them to
// gRPC status codes and back, so that errors.Is works on both sides of the API.
package apierr

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinels. Wrap them with Errorf so the message says what, and errors.Is says which.
var (
	NotFound         = errors.New("not found")
	AlreadyExists    = errors.New("already exists")
	NotValid         = errors.New("not valid")
	NotSupported     = errors.New("not supported")
	NotAlive         = errors.New("not alive")
	HasAssignedUnits = errors.New("has assigned units")
	Contention       = errors.New("excessive contention")
	Unauthenticated  = errors.New("invalid entity name or password")
	PermissionDenied = errors.New("permission denied")
	Unavailable      = errors.New("unavailable")
	// Throttled refuses a caller that must wait: a login after too many failed ones.
	Throttled = errors.New("too many attempts")
	// NoQuorum refuses a write to a controller member that cannot reach a majority of the
	// store's members. On the wire it is FailedPrecondition, not Unavailable: the member
	// answers (and serves reads), so a client must not take it for an address to skip.
	NoQuorum = errors.New("no quorum")
)

// errorDomain marks our ErrorInfo details, so foreign details are ignored.
const errorDomain = "juju"

// table is the one mapping between sentinels, gRPC codes and wire reasons.
var table = []struct {
	err    error
	code   codes.Code
	reason string
}{
	{NotFound, codes.NotFound, "not-found"},
	{AlreadyExists, codes.AlreadyExists, "already-exists"},
	{NotValid, codes.InvalidArgument, "not-valid"},
	{NotSupported, codes.Unimplemented, "not-supported"},
	{NotAlive, codes.FailedPrecondition, "not-alive"},
	{HasAssignedUnits, codes.FailedPrecondition, "has-assigned-units"},
	{Contention, codes.Aborted, "excessive-contention"},
	{Unauthenticated, codes.Unauthenticated, "unauthenticated"},
	{PermissionDenied, codes.PermissionDenied, "permission-denied"},
	{Unavailable, codes.Unavailable, "unavailable"},
	{Throttled, codes.ResourceExhausted, "throttled"},
	{NoQuorum, codes.FailedPrecondition, "no-quorum"},
}

// Error is a message that wraps one sentinel: Error() is the message alone.
type Error struct {
	msg      string
	sentinel error
}

func (e *Error) Error() string { return e.msg }

// Unwrap lets errors.Is find the sentinel.
func (e *Error) Unwrap() error { return e.sentinel }

// Errorf formats a message and ties it to sentinel. %w verbs in format are honoured too.
func Errorf(sentinel error, format string, args ...any) error {
	inner := fmt.Errorf(format, args...)
	if errors.Is(inner, sentinel) {
		return inner
	}
	return &Error{msg: inner.Error(), sentinel: sentinel}
}

// ToStatus turns an error into a gRPC status error. Context errors pass through as their codes;
// errors that match no sentinel become codes.Unknown with their message.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isOurs(err) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	for _, row := range table {
		if errors.Is(err, row.err) {
			st := status.New(row.code, err.Error())
			if withInfo, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: row.reason, Domain: errorDomain}); derr == nil {
				st = withInfo
			}
			return st.Err()
		}
	}
	return status.Error(codes.Unknown, err.Error())
}

// isOurs reports whether err is (or wraps) one of our errors rather than a bare gRPC status.
func isOurs(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return true
	}
	for _, row := range table {
		if errors.Is(err, row.err) {
			return true
		}
	}
	return false
}

// FromStatus turns a gRPC status error back into an error that errors.Is matches against the
// sentinels. Errors that are not gRPC statuses are returned as they are.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.Domain != errorDomain {
			continue
		}
		for _, row := range table {
			if row.reason == info.Reason {
				return &Error{msg: st.Message(), sentinel: row.err}
			}
		}
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		return &Error{msg: st.Message(), sentinel: context.DeadlineExceeded}
	case codes.Canceled:
		return &Error{msg: st.Message(), sentinel: context.Canceled}
	}
	// A bare status is mapped by its code alone where the code means one thing; gRPC's own
	// ResourceExhausted (a message over the size limit) is not a throttle.
	for _, row := range table {
		if row.code == st.Code() && row.code != codes.FailedPrecondition && row.code != codes.ResourceExhausted {
			return &Error{msg: st.Message(), sentinel: row.err}
		}
	}
	return errors.New(st.Message())
}
