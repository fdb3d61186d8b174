package output

import "testing"

func TestInfoVerboseWarning(t *testing.T) {
	tests := []struct {
		name           string
		quiet, verbose bool
		want           string
	}{
		{name: "default", want: "info 1\nWARNING careful\n"},
		{name: "quiet", quiet: true, want: "WARNING careful\n"},
		{name: "verbose", verbose: true, want: "info 1\ndetail\nWARNING careful\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, out, errOut := TestStreams()
			s.Quiet, s.Verbose = tt.quiet, tt.verbose
			s.Infof("info %d", 1)
			s.Verbosef("detail\n")
			s.Warningf("careful")
			if errOut.String() != tt.want || out.Len() != 0 {
				t.Errorf("stderr %q stdout %q, want stderr %q", errOut, out, tt.want)
			}
		})
	}
}
