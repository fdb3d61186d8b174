// Package paramschema checks an action's params against the charm's JSON schema, with a maintained
// JSON-schema library. The controller checks them when a task is queued and the unit agent
// before it runs; the CLI leaves it to the controller, whose refusal it shows, and so does not
// link the library, whose initialisation every command would pay for at start.
package paramschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Compile parses an action's params schema (JSON text, as the controller stores it).
func Compile(action string, schemaJSON []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("action %q: invalid params schema: %v", action, err)
	}
	c := jsonschema.NewCompiler()
	url := "action:" + action
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("action %q: invalid params schema: %v", action, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("action %q: invalid params schema: %v", action, err)
	}
	return s, nil
}

// ValidateParams checks params (JSON values: maps with string keys, float64 or json.Number,
// strings, bools, slices) against an action's params schema. The error is one line naming
// the action and what is wrong.
func ValidateParams(action string, schemaJSON []byte, params map[string]any) error {
	s, err := Compile(action, schemaJSON)
	if err != nil {
		return err
	}
	// Round-trip through JSON so the validator sees exactly the JSON types the charm will.
	data, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("action %q: params are not JSON: %v", action, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("action %q: params are not JSON: %v", action, err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("validation failed for action %q: %s", action, oneLine(err))
	}
	return nil
}

var english = message.NewPrinter(language.English)

// oneLine flattens the library's validation tree into its leaf messages.
func oneLine(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			msg := e.ErrorKind.LocalizedString(english)
			if at != "/" {
				msg = "at " + at + ": " + msg
			}
			msgs = append(msgs, msg)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}
