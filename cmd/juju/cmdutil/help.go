package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// SeeAlso is the annotation key of a command's related commands, shown under "See also:" in its
// help: names separated by commas or spaces, e.g.
//
//	Annotations: map[string]string{cmdutil.SeeAlso: "add-unit, remove-unit, status"},
const SeeAlso = "seeAlso"

// SeeAlsoOf returns the related commands named by cmd's SeeAlso annotation, in order.
func SeeAlsoOf(cmd *cobra.Command) []string {
	return strings.FieldsFunc(cmd.Annotations[SeeAlso], func(r rune) bool {
		return r == ',' || r == ' ' || r == '\n' || r == '\t'
	})
}
