package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// FlagError is a usage error: a bad flag, argument or combination of them, found before any
// request is sent. root.Main prints it as "ERROR <msg>" and exits 2.
type FlagError struct {
	Err error
}

func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf formats a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// FlagErrorWrap marks err as a usage error; nil stays nil.
func FlagErrorWrap(err error) error {
	if err == nil {
		return nil
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		return err
	}
	return &FlagError{Err: err}
}

// ErrSilent makes root.Main exit 1 without printing anything: the command has already reported
// what went wrong.
var ErrSilent = errors.New("silent error")

// UnrecognizedArgs is Juju's error for arguments a command does not take.
func UnrecognizedArgs(args []string) error {
	return FlagErrorf("unrecognized args: %q", args)
}

// NoArgs is a cobra.PositionalArgs that refuses any argument with Juju's message.
func NoArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UnrecognizedArgs(args)
	}
	return nil
}

// MaxArgs refuses more than n arguments with Juju's message.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return UnrecognizedArgs(args[n:])
		}
		return nil
	}
}

// AtLeastOneArg wants one or more arguments, each passing valid: none is a usage error saying
// missing, a bad one a usage error from invalid (a format taking the argument).
func AtLeastOneArg(missing string, valid func(string) bool, invalid string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return FlagErrorf("%s", missing)
		}
		for _, a := range args {
			if !valid(a) {
				return FlagErrorf(invalid, a)
			}
		}
		return nil
	}
}

// ExactlyOneArg wants one argument: none is a usage error saying missing, more are unrecognized.
func ExactlyOneArg(missing string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return FlagErrorf("%s", missing)
		}
		return MaxArgs(1)(nil, args)
	}
}
