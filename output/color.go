package output

// Color is an ANSI foreground colour.
type Color string

// The colours used by status output (juju-cli.md §3 "Colours"): statuses green, yellow or red;
// headers bold, addresses cyan, ports bright magenta, messages grey, endpoints magenta.
const (
	Green         Color = "\x1b[32m"
	Yellow        Color = "\x1b[33m"
	Red           Color = "\x1b[31m"
	Bold          Color = "\x1b[1m"
	Cyan          Color = "\x1b[36m"
	Magenta       Color = "\x1b[35m"
	BrightMagenta Color = "\x1b[95m"
	Grey          Color = "\x1b[90m"
)

const resetColor = "\x1b[0m"

// statusColors is Juju's status → colour map (core/output).
var statusColors = map[string]Color{
	"active":    Green,
	"running":   Green,
	"idle":      Green,
	"started":   Green,
	"executing": Green,
	"attaching": Green,
	"attached":  Green,

	"allocating":  Yellow,
	"lost":        Yellow,
	"maintenance": Yellow,
	"pending":     Yellow,
	"rebooting":   Yellow,
	"stopped":     Yellow,
	"unknown":     Yellow,
	"detaching":   Yellow,
	"detached":    Yellow,

	"blocked":    Red,
	"down":       Red,
	"error":      Red,
	"failed":     Red,
	"terminated": Red,
}

// Colorize paints text in the colour Juju uses for status. It returns text unchanged when s is nil,
// colour is off, text is empty or the status has no colour.
func Colorize(s *Streams, status, text string) string {
	if s == nil || !s.Color {
		return text
	}
	return Paint(s, StatusColor(status), text)
}

// StatusColor is the colour Juju shows status in, or "" for none.
func StatusColor(status string) Color { return statusColors[status] }

// Paint wraps text in colour c when s has colour enabled.
func Paint(s *Streams, c Color, text string) string {
	if s == nil || !s.Color || text == "" || c == "" {
		return text
	}
	return string(c) + text + resetColor
}

// Headers paints a table's headers bold when s has colour enabled.
func Headers(s *Streams, headers ...string) []string {
	if s == nil || !s.Color {
		return headers
	}
	painted := make([]string, len(headers))
	for i, h := range headers {
		painted[i] = Paint(s, Bold, h)
	}
	return painted
}
