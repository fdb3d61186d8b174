package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/output"
)

// Colour in run and exec, as Juju's runCommandBase has it: --color and --no-color; the yaml and
// json results, run's plain results, the ids in the progress lines and the return codes of
// failed tasks are coloured. It lives here rather than in output/ because only these commands
// colour documents this way (Juju's core/output YamlFormatter and JSONFormatter).

// The SGR sequences Juju's colours write (github.com/juju/ansiterm).
const (
	sgrReset    = "\x1b[0m"
	sgrRed      = "\x1b[31m"   // ErrorHighlight: a failed task
	sgrGreen    = "\x1b[32m"   // GoodHighlight: a task's values
	sgrMagenta  = "\x1b[35m"   // counts, return codes; numbers, booleans and null in documents
	sgrCyan     = "\x1b[36m"   // InfoHighlight: operation and task ids; addresses in documents
	sgrDefault  = "\x1b[39m"   // strings in documents
	sgrGrey     = "\x1b[90m"   // a YAML block scalar's lines
	sgrPunct    = "\x1b[95m"   // the ":" after a key; YAML comments
	sgrKey      = "\x1b[1;96m" // keys
	sgrReceiver = "\x1b[1;39m" // EmphasisHighlight.DefaultBold: a task's receiver
)

// addColorFlags registers --color and --no-color, with Juju's words.
func addColorFlags(cmd *cobra.Command, color, noColor *bool) {
	cmd.Flags().BoolVar(color, "color", false, "Use ANSI color codes in output")
	cmd.Flags().BoolVar(noColor, "no-color", false, "Disable ANSI color codes in output")
}

// useColor decides as Juju's run and exec do: --no-color turns colour off (even with --color);
// --color turns it on, wherever the output goes; otherwise it is on when the results go to
// stdout and that is a terminal (without NO_COLOR, TERM=dumb), as Streams.Color says.
func useColor(s *output.Streams, color, noColor bool, outputFile string) bool {
	return !noColor && (color || (s.Color && outputFile == ""))
}

// paint wraps s in one of the colours above, or leaves it when on is false.
func paint(on bool, sgr string, s any) string {
	if !on {
		return fmt.Sprint(s)
	}
	return sgr + fmt.Sprint(s) + sgrReset
}

// writeResults writes the results as output.WriteFile does, coloured when color: yaml and json
// documents throughout, run's plain format by status; exec's plain format, the commands' own
// output, is never coloured (nor is it in Juju).
func writeResults(path string, f output.Format, r taskResults, s *output.Streams, color bool) error {
	if !color {
		return output.WriteFile(path, f, r, s)
	}
	var buf bytes.Buffer
	var err error
	switch f {
	case output.YAML:
		var plain bytes.Buffer
		if err = output.Write(&plain, f, r); err == nil {
			colorYAML(&buf, plain.String())
		}
	case output.JSON:
		var plain bytes.Buffer
		if err = output.Write(&plain, f, r); err == nil {
			err = colorJSON(&buf, plain.Bytes())
		}
	case Plain:
		err = r.writePlain(&buf, true)
	default:
		err = output.Write(&buf, f, r)
	}
	if err != nil {
		return err
	}
	if path == "" {
		_, err = s.Out.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing output file: %w", err)
	}
	return nil
}

// colorYAML colours a YAML document line by line, as Juju's YamlFormatter does: keys bold
// bright cyan with a bright magenta ":", numbers and booleans magenta, addresses cyan, other
// values and list items in the default colour, the lines of a block scalar ("|", ">") grey.
func colorYAML(w io.Writer, doc string) {
	block, blockIndent := false, 0
	for _, line := range strings.SplitAfter(doc, "\n") {
		if line == "" {
			continue
		}
		line = strings.TrimSuffix(line, "\n")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		trimmed := strings.TrimSpace(line)
		if block && indent > blockIndent {
			fmt.Fprint(w, paint(true, sgrGrey, line+"\n"))
			continue
		}
		if trimmed == "" {
			fmt.Fprintln(w, line) // a blank line does not end a block
			continue
		}
		key, value, ok := yamlKeyValue(line)
		if !ok {
			block = false
			switch {
			case strings.HasPrefix(trimmed, "#"):
				fmt.Fprint(w, paint(true, sgrPunct, line+"\n"))
			case strings.HasPrefix(trimmed, "-"):
				fmt.Fprint(w, paint(true, sgrDefault, line+"\n"))
			default:
				fmt.Fprintln(w, line)
			}
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			fmt.Fprint(w, paint(true, sgrPunct, line+"\n"))
		} else {
			fmt.Fprint(w, colorYAMLPair(key, value))
		}
		block, blockIndent = strings.ContainsAny(value, "|>"), indent
	}
}

// yamlKeyValue splits "key: value" (or "key:") as Juju's formatter does: at the first ": ",
// or else at a last ":" that ends the line or is followed by a space. A URL is not a key.
func yamlKeyValue(line string) (key, value string, ok bool) {
	if strings.Contains(line, "://") || !strings.Contains(line, ":") {
		return "", "", false
	}
	parts := strings.Split(line, ":")
	if rest := parts[1]; rest == "" || strings.HasPrefix(rest, " ") {
		return parts[0], strings.TrimSpace(strings.Join(parts[1:], ":")), true
	}
	if last := parts[len(parts)-1]; len(parts) > 2 && (last == "" || strings.HasPrefix(last, " ")) {
		return strings.Join(parts[:len(parts)-1], ":"), strings.TrimSpace(last), true
	}
	return "", "", false
}

// colorYAMLPair colours one key and its value.
func colorYAMLPair(key, value string) string {
	k := sgrKey + key + paint(true, sgrPunct, ":") + " " + sgrReset
	if _, err := strconv.Atoi(value); err == nil {
		return k + paint(true, sgrMagenta, value+"\n")
	}
	if _, err := strconv.Atoi(strings.ReplaceAll(value, ".", "")); err == nil {
		return k + paint(true, sgrCyan, value) + "\n" // an address such as 10.0.0.1
	}
	if ip, network, err := net.ParseCIDR(value); err == nil && network.Contains(ip) {
		addr, bits, _ := strings.Cut(value, "/")
		return paint(true, sgrKey, k+paint(true, sgrCyan, addr)+"/"+paint(true, sgrMagenta, bits)+"\n")
	}
	if strings.EqualFold(value, "true") || strings.EqualFold(value, "false") {
		return k + paint(true, sgrMagenta, value+"\n")
	}
	return k + paint(true, sgrDefault, value) + "\n"
}

// colorJSON colours a JSON document as Juju's JSONFormatter does: on one line, keys in order,
// keys bold bright cyan with a bright magenta ":", strings in the default colour, numbers,
// booleans and null magenta.
func colorJSON(w io.Writer, doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("colouring json: %w", err)
	}
	var b strings.Builder
	colorJSONValue(&b, v)
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func colorJSONValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			name, _ := json.Marshal(k)
			b.WriteString(sgrKey + string(name) + paint(true, sgrPunct, ":") + sgrReset)
			colorJSONValue(b, v[k])
		}
		b.WriteString("}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteString(",")
			}
			colorJSONValue(b, e)
		}
		b.WriteString("]")
	case string:
		s, _ := json.Marshal(v)
		b.WriteString(paint(true, sgrDefault, string(s)))
	case nil:
		b.WriteString(paint(true, sgrMagenta, "null"))
	default: // json.Number, bool
		b.WriteString(paint(true, sgrMagenta, v))
	}
}
