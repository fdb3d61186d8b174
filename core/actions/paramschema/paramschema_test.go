package paramschema

import (
	"strings"
	"testing"
)

const schema = `{"title":"backup","type":"object","properties":{"target":{"type":"string"},"count":{"type":"integer","minimum":1}},"required":["target"],"additionalProperties":false}`

func TestValidateParams(t *testing.T) {
	if err := ValidateParams("backup", []byte(schema), map[string]any{"target": "s3", "count": 2}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{}, `validation failed for action "backup": missing property 'target'`},
		{map[string]any{"target": 1}, `at /target: got number, want string`},
		{map[string]any{"target": "x", "count": 0}, `at /count: minimum: got 0, want 1`},
		{map[string]any{"target": "x", "extra": true}, `additional properties 'extra' not allowed`},
	} {
		err := ValidateParams("backup", []byte(schema), tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v, want one line with %q", tc.params, err, tc.want)
		}
	}
	if _, err := Compile("bad", []byte(`{"type":"nosuch"}`)); err == nil {
		t.Error("a schema with an unknown type compiled")
	}
}
