package modelconfig

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		err    string
	}{
		{nil, ""},
		{map[string]string{"update-status-hook-interval": "5m"}, ""},
		{map[string]string{"update-status-hook-interval": "1s"}, ""},
		{map[string]string{"update-status-hook-interval": "60m"}, ""},
		{map[string]string{"update-status-hook-interval": "61m"}, "outside 1s to 1h0m0s"},
		{map[string]string{"update-status-hook-interval": "500ms"}, "outside"},
		{map[string]string{"update-status-hook-interval": "soon"}, `"soon" is not a duration`},
		{map[string]string{"no-such-key": "x"}, `unknown model config key "no-such-key"`},
	} {
		err := Validate(tc.config)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Validate(%v) = %v, want %q", tc.config, err, tc.err)
		}
	}
}

func TestUpdateStatusInterval(t *testing.T) {
	if got := UpdateStatusInterval(nil); got != 5*time.Minute {
		t.Errorf("default = %s", got)
	}
	if got := UpdateStatusInterval(map[string]string{"update-status-hook-interval": "2s"}); got != 2*time.Second {
		t.Errorf("2s = %s", got)
	}
}
