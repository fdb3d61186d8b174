package actions

import "testing"

func TestWithDefaults(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"target": map[string]any{"type": "string", "default": "local"},
		"given":  map[string]any{"type": "string", "default": "no"},
		"nested": map[string]any{"type": "object", "properties": map[string]any{
			"depth": map[string]any{"type": "integer", "default": 3},
		}},
	}}
	params := map[string]any{"given": "yes", "nested": map[string]any{}}
	got := WithDefaults(schema, params)
	if got["target"] != "local" || got["given"] != "yes" || got["nested"].(map[string]any)["depth"] != 3 {
		t.Errorf("WithDefaults = %v", got)
	}
	if _, changed := params["target"]; changed || len(params["nested"].(map[string]any)) != 0 {
		t.Errorf("WithDefaults changed its input: %v", params)
	}
}
