package waitfor

import (
	"fmt"
	"slices"
	"strings"
)

// The fields a query may test, per entity kind, in the order "last seen" lists them.
var kindFields = map[string][]string{
	"application": {"life", "status", "scale"},
	"unit":        {"life", "workload-status", "agent-status", "machine"},
	"machine":     {"life", "status", "instance-status"},
}

// defaultQueries are what wait-for waits for without --query.
var defaultQueries = map[string]string{
	"application": `status=="active"`,
	"unit":        `workload-status=="active"`,
	"machine":     `status=="started"`,
}

// term is one comparison: field == value, or field != value when negated.
type term struct {
	field, value string
	negated      bool
}

func (t term) String() string {
	op := "=="
	if t.negated {
		op = "!="
	}
	return t.field + op + `"` + t.value + `"`
}

// query is a disjunction of conjunctions: && binds tighter than ||.
type query struct {
	anyOf [][]term
}

// match reports whether the entity whose fields are fields satisfies q; a field it lacks is "".
func (q *query) match(fields map[string]string) bool {
	for _, all := range q.anyOf {
		ok := true
		for _, t := range all {
			if (fields[t.field] == t.value) == t.negated {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// String is q in canonical form: `life=="alive" && status=="active" || life=="dead"`.
func (q *query) String() string {
	ors := make([]string, len(q.anyOf))
	for i, all := range q.anyOf {
		ands := make([]string, len(all))
		for j, t := range all {
			ands[j] = t.String()
		}
		ors[i] = strings.Join(ands, " && ")
	}
	return strings.Join(ors, " || ")
}

// parseQuery reads a query on an entity of kind:
//
//	query := and ("||" and)*
//	and   := term ("&&" term)*
//	term  := field ("==" | "!=") string
//
// where field is one of kind's fields and string is double- or single-quoted, without escapes.
func parseQuery(kind, s string) (*query, error) {
	p := &queryParser{s: s, kind: kind}
	p.skipSpace()
	if p.eof() {
		return nil, fmt.Errorf("empty query")
	}
	q := &query{}
	all := []term{}
	for {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		all = append(all, t)
		p.skipSpace()
		switch {
		case p.eof():
			q.anyOf = append(q.anyOf, all)
			return q, nil
		case p.accept("&&"):
		case p.accept("||"):
			q.anyOf = append(q.anyOf, all)
			all = []term{}
		default:
			return nil, fmt.Errorf("expected && or || at %q", p.rest())
		}
	}
}

type queryParser struct {
	s, kind string
	i       int
}

func (p *queryParser) eof() bool    { return p.i >= len(p.s) }
func (p *queryParser) rest() string { return p.s[p.i:] }

func (p *queryParser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *queryParser) accept(tok string) bool {
	if strings.HasPrefix(p.rest(), tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *queryParser) term() (term, error) {
	p.skipSpace()
	start := p.i
	for !p.eof() && (p.s[p.i] == '-' || (p.s[p.i] >= 'a' && p.s[p.i] <= 'z')) {
		p.i++
	}
	field := p.s[start:p.i]
	if field == "" {
		if p.eof() {
			return term{}, fmt.Errorf("expected a field name at the end of the query")
		}
		return term{}, fmt.Errorf("expected a field name at %q", p.rest())
	}
	fields := kindFields[p.kind]
	if !slices.Contains(fields, field) {
		return term{}, fmt.Errorf("unknown field %q for %s; use %s", field, p.kind, orList(fields))
	}
	p.skipSpace()
	t := term{field: field}
	switch {
	case p.accept("=="):
	case p.accept("!="):
		t.negated = true
	default:
		return term{}, fmt.Errorf("expected == or != after %q", field)
	}
	p.skipSpace()
	if p.eof() || (p.s[p.i] != '"' && p.s[p.i] != '\'') {
		return term{}, fmt.Errorf("expected a quoted value after %q", p.s[start:p.i])
	}
	quote := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], quote)
	if end < 0 {
		return term{}, fmt.Errorf("unterminated value %s", p.rest())
	}
	t.value = p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	if err := checkValue(t); err != nil {
		return term{}, err
	}
	return t, nil
}

// checkValue refuses values a field never takes, which would make wait-for wait forever.
func checkValue(t term) error {
	switch t.field {
	case "life":
		if !slices.Contains([]string{"alive", "dying", "dead"}, t.value) {
			return fmt.Errorf("invalid life %q; use alive, dying or dead", t.value)
		}
	case "scale":
		if t.value == "" || strings.Trim(t.value, "0123456789") != "" || (len(t.value) > 1 && t.value[0] == '0') {
			return fmt.Errorf("invalid scale %q; use a number of units", t.value)
		}
	}
	return nil
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
