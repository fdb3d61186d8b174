package waitfor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The query language is Juju's wait-for DSL: comparisons of fields with values, && and ||,
// parentheses, and the builtins len(x) and forEach(collection, x => condition):
//
//	query   := or
//	or      := and ("||" and)*
//	and     := cmp ("&&" cmp)*
//	cmp     := operand [("==" | "!=" | "<" | "<=" | ">" | ">=") operand]
//	operand := string | number | "true" | "false" | "(" or ")"
//	         | field | var "." field | name "(" [arg ("," arg)*] ")"
//	arg     := or | var "=>" or
//
// Strings are double- or single-quoted, without escapes. Unlike Juju, which finds mistakes
// only once it evaluates the query, a query is checked when it is parsed: every field must be
// one of its entity's, compared with a value of its type, and the whole query must be a
// condition, so a typo is a usage error rather than a wait that never ends.

// valueType is the type of a query expression.
type valueType struct {
	base string // "string", "int", "float", "bool", "collection", "entity" or "lambda"
	kind string // the entity kind of a collection's elements or of an entity
}

var (
	tString = valueType{base: "string"}
	tInt    = valueType{base: "int"}
	tFloat  = valueType{base: "float"}
	tBool   = valueType{base: "bool"}
)

func collectionOf(kind string) valueType { return valueType{base: "collection", kind: kind} }

func (t valueType) String() string {
	switch t.base {
	case "collection":
		return "a collection of " + t.kind + "s"
	case "entity":
		return "a " + t.kind
	case "lambda":
		return "a lambda"
	case "int":
		return "an int"
	}
	return "a " + t.base
}

func (t valueType) numeric() bool { return t == tInt || t == tFloat }

// field is one field of an entity kind, as a query names it.
type field struct {
	name string
	typ  valueType
}

// kindFields are the fields of each entity kind, in the order "last seen" lists them.
var kindFields = map[string][]field{
	"model": {
		{"name", tString}, {"life", tString}, {"status", tString},
		{"applications", collectionOf("application")}, {"machines", collectionOf("machine")}, {"units", collectionOf("unit")},
	},
	"application": {
		{"name", tString}, {"life", tString}, {"status", tString}, {"scale", tInt}, {"charm-url", tString},
		{"exposed", tBool}, {"subordinate", tBool}, {"workload-version", tString},
		{"units", collectionOf("unit")}, {"machines", collectionOf("machine")},
	},
	"unit": {
		{"name", tString}, {"application", tString}, {"life", tString}, {"workload-status", tString},
		{"workload-message", tString}, {"agent-status", tString}, {"machine", tString}, {"machine-id", tString},
		{"public-address", tString}, {"principal", tString}, {"subordinate", tBool}, {"leader", tBool},
		{"machines", collectionOf("machine")},
	},
	"machine": {
		{"id", tString}, {"life", tString}, {"status", tString}, {"agent-status", tString},
		{"instance-status", tString}, {"base", tString},
	},
}

// kinds are the entity kinds wait-for takes, as its usage lists them.
var kinds = []string{"model", "application", "unit", "machine"}

func fieldOf(kind, name string) (field, bool) {
	for _, f := range kindFields[kind] {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

func fieldNames(kind string) []string {
	var out []string
	for _, f := range kindFields[kind] {
		out = append(out, f.name)
	}
	return out
}

// defaultQueries are what wait-for waits for without --query.
var defaultQueries = map[string]string{
	"model":       `life=="alive" && status=="available"`,
	"application": `status=="active"`,
	"unit":        `workload-status=="active"`,
	"machine":     `status=="started"`,
}

// query is a parsed and checked query on an entity of kind.
type query struct {
	kind string
	root node
	// fields are the fields of the entity the query reads, and per collection those of its
	// elements: what "last seen" shows.
	fields      []string
	collections map[string][]string
}

// String is the query in canonical form: `life=="alive" && status=="active" || life=="dead"`.
func (q *query) String() string { return q.root.String() }

// match evaluates the query on e.
func (q *query) match(e *entity) bool {
	b, _ := q.root.eval(&env{self: e}).(bool)
	return b
}

// parseQuery reads and checks a query on an entity of kind.
func parseQuery(kind, s string) (*query, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 {
		return nil, fmt.Errorf("empty query")
	}
	p := &parser{src: s, toks: toks}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("expected && or || at %q", s[t.pos:])
	}
	c := &checker{kind: kind, q: &query{kind: kind, root: root, collections: map[string][]string{}}}
	typ, err := c.check(root, nil)
	if err != nil {
		return nil, err
	}
	if typ != tBool {
		return nil, fmt.Errorf("the query is %s, not a condition: compare it, as in %s", typ, defaultQueries[kind])
	}
	return c.q, nil
}

// Tokens.

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp // == != < <= > >= && || ( ) , . =>
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// lex splits a query into tokens, the last one tokEOF.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEOF, pos: i}), nil
		}
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated value %s", s[i:])
			}
			toks = append(toks, token{kind: tokString, text: s[i+1 : i+1+end], pos: i})
			i += end + 2
		case c >= '0' && c <= '9':
			start := i
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
				i++
			}
			toks = append(toks, token{kind: tokNumber, text: s[start:i], pos: start})
		case isIdentStart(c):
			start := i
			for i < len(s) && (isIdentStart(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '-') {
				i++
			}
			toks = append(toks, token{kind: tokIdent, text: s[start:i], pos: start})
		default:
			op := ""
			for _, o := range []string{"==", "!=", "<=", ">=", "&&", "||", "=>", "<", ">", "(", ")", ",", "."} {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			switch {
			case op == "" && c == '=':
				return nil, fmt.Errorf("use == to compare, not = (at %q)", s[i:])
			case op == "":
				return nil, fmt.Errorf("unexpected %q at %q", s[i:i+1], s[i:])
			}
			toks = append(toks, token{kind: tokOp, text: op, pos: i})
			i += len(op)
		}
	}
}

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// Syntax.

// node is an expression of the query.
type node interface {
	String() string
	eval(e *env) any
}

type (
	stringLit struct{ v string }
	numberLit struct {
		text   string
		v      float64
		isInt  bool
		quoted bool // a quoted number compared with a number field (scale=="3")
	}
	boolLit  struct{ v bool }
	fieldRef struct{ name string }           // a field of the entity, or a lambda's variable
	accessor struct{ variable, name string } // unit.workload-status
	binary   struct {
		op   string
		l, r node
	}
	call struct {
		fn   string
		args []node
	}
	lambda struct {
		param string
		body  node
	}
	paren struct{ inner node }
)

func (n *stringLit) String() string { return strconv.Quote(n.v) }
func (n *numberLit) String() string {
	if n.quoted {
		return `"` + n.text + `"`
	}
	return n.text
}
func (n *boolLit) String() string  { return strconv.FormatBool(n.v) }
func (n *fieldRef) String() string { return n.name }
func (n *accessor) String() string { return n.variable + "." + n.name }
func (n *binary) String() string {
	if n.op == "&&" || n.op == "||" {
		return n.l.String() + " " + n.op + " " + n.r.String()
	}
	return n.l.String() + n.op + n.r.String()
}
func (n *call) String() string {
	args := make([]string, len(n.args))
	for i, a := range n.args {
		args[i] = a.String()
	}
	return n.fn + "(" + strings.Join(args, ", ") + ")"
}
func (n *lambda) String() string { return n.param + " => " + n.body.String() }
func (n *paren) String() string  { return "(" + n.inner.String() + ")" }

type parser struct {
	src  string
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}
func (p *parser) acceptOp(op string) bool {
	if t := p.peek(); t.kind == tokOp && t.text == op {
		p.i++
		return true
	}
	return false
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.acceptOp("||") {
		var r node
		if r, err = p.and(); err == nil {
			l = &binary{op: "||", l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.cmp()
	for err == nil && p.acceptOp("&&") {
		var r node
		if r, err = p.cmp(); err == nil {
			l = &binary{op: "&&", l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) cmp() (node, error) {
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if p.acceptOp(op) {
			r, err := p.operand()
			if err != nil {
				return nil, err
			}
			return &binary{op: op, l: l, r: r}, nil
		}
	}
	return l, nil
}

func (p *parser) operand() (node, error) {
	t := p.next()
	switch t.kind {
	case tokEOF:
		return nil, fmt.Errorf("expected a field name at the end of the query")
	case tokString:
		return &stringLit{v: t.text}, nil
	case tokNumber:
		return parseNumber(t.text)
	case tokIdent:
		switch {
		case t.text == "true" || t.text == "false":
			return &boolLit{v: t.text == "true"}, nil
		case p.acceptOp("("):
			return p.callArgs(t.text)
		case p.acceptOp("."):
			f := p.next()
			if f.kind != tokIdent {
				return nil, fmt.Errorf("expected a field name after %q", t.text+".")
			}
			return &accessor{variable: t.text, name: f.text}, nil
		}
		return &fieldRef{name: t.text}, nil
	case tokOp:
		if t.text == "(" {
			inner, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.acceptOp(")") {
				return nil, fmt.Errorf("expected ) at %q", p.rest())
			}
			return &paren{inner: inner}, nil
		}
	}
	return nil, fmt.Errorf("expected a field name at %q", p.restFrom(t))
}

func (p *parser) callArgs(fn string) (node, error) {
	c := &call{fn: fn}
	if p.acceptOp(")") {
		return c, nil
	}
	for {
		var arg node
		var err error
		if t := p.peek(); t.kind == tokIdent && p.toks[p.i+1].kind == tokOp && p.toks[p.i+1].text == "=>" {
			p.i += 2
			body, err := p.or()
			if err != nil {
				return nil, err
			}
			arg = &lambda{param: t.text, body: body}
		} else if arg, err = p.or(); err != nil {
			return nil, err
		}
		c.args = append(c.args, arg)
		if p.acceptOp(")") {
			return c, nil
		}
		if !p.acceptOp(",") {
			return nil, fmt.Errorf("expected , or ) in the arguments of %s at %q", fn, p.rest())
		}
	}
}

// rest is what is left of the query from the next token.
func (p *parser) rest() string { return p.restFrom(p.peek()) }

func (p *parser) restFrom(t token) string { return p.src[t.pos:] }

func parseNumber(text string) (*numberLit, error) {
	if !strings.Contains(text, ".") {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid number %q", text)
		}
		return &numberLit{text: text, v: float64(n), isInt: true}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid number %q", text)
	}
	return &numberLit{text: text, v: f}, nil
}

// Checking.

type checker struct {
	kind string
	q    *query
}

// scope maps the lambda variables in scope to their entity kinds.
type scope map[string]string

func (c *checker) check(n node, vars scope) (valueType, error) {
	switch n := n.(type) {
	case *stringLit:
		return tString, nil
	case *numberLit:
		if n.isInt {
			return tInt, nil
		}
		return tFloat, nil
	case *boolLit:
		return tBool, nil
	case *paren:
		return c.check(n.inner, vars)
	case *fieldRef:
		if k, ok := vars[n.name]; ok {
			return valueType{}, fmt.Errorf("%s is %s: use one of its fields, as in %s.%s", n.name, valueType{base: "entity", kind: k}, n.name, kindFields[k][0].name)
		}
		f, ok := fieldOf(c.kind, n.name)
		if !ok {
			return valueType{}, fmt.Errorf("unknown field %q for %s; use %s", n.name, c.kind, orList(fieldNames(c.kind)))
		}
		if !slices.Contains(c.q.fields, f.name) {
			c.q.fields = append(c.q.fields, f.name)
		}
		return f.typ, nil
	case *accessor:
		k, ok := vars[n.variable]
		if !ok {
			return valueType{}, fmt.Errorf("unknown variable %q in %s: name the elements of a collection with forEach, as in forEach(units, unit => unit.life==\"alive\")", n.variable, n)
		}
		f, ok := fieldOf(k, n.name)
		if !ok {
			return valueType{}, fmt.Errorf("unknown field %q for %s; use %s", n.name, k, orList(fieldNames(k)))
		}
		return f.typ, nil
	case *lambda:
		return valueType{}, fmt.Errorf("a lambda (%s) is only valid as the second argument of forEach", n)
	case *call:
		return c.checkCall(n, vars)
	case *binary:
		return c.checkBinary(n, vars)
	}
	return valueType{}, fmt.Errorf("unexpected %s", n)
}

func (c *checker) checkCall(n *call, vars scope) (valueType, error) {
	switch n.fn {
	case "len":
		if len(n.args) != 1 {
			return valueType{}, fmt.Errorf("len takes one argument, got %d", len(n.args))
		}
		t, err := c.check(n.args[0], vars)
		if err != nil {
			return valueType{}, err
		}
		if t.base != "collection" && t != tString {
			return valueType{}, fmt.Errorf("len takes a collection or a string, got %s", t)
		}
		return tInt, nil
	case "forEach":
		usage := fmt.Errorf("forEach takes a collection and a lambda, as in forEach(units, unit => unit.workload-status==\"active\")")
		if len(n.args) != 2 {
			return valueType{}, usage
		}
		t, err := c.check(n.args[0], vars)
		if err != nil {
			return valueType{}, err
		}
		l, ok := n.args[1].(*lambda)
		if t.base != "collection" || !ok {
			return valueType{}, usage
		}
		// Bare names are the entity's fields, at any depth: a variable may not hide one.
		if _, ok := fieldOf(c.kind, l.param); ok {
			return valueType{}, fmt.Errorf("the variable %q of %s hides the field %q: name it otherwise", l.param, l, l.param)
		}
		inner := scope{}
		for k, v := range vars {
			inner[k] = v
		}
		inner[l.param] = t.kind
		bt, err := c.check(l.body, inner)
		if err != nil {
			return valueType{}, err
		}
		if bt != tBool {
			return valueType{}, fmt.Errorf("the lambda of forEach must be a condition, got %s in %s", bt, l)
		}
		if ref, ok := n.args[0].(*fieldRef); ok && len(vars) == 0 {
			c.recordCollection(ref.name, l)
		}
		return tBool, nil
	}
	return valueType{}, fmt.Errorf("unknown function %q; use len or forEach", n.fn)
}

// recordCollection notes the fields a lambda reads of a collection's elements.
func (c *checker) recordCollection(coll string, l *lambda) {
	var walk func(node)
	walk = func(n node) {
		switch n := n.(type) {
		case *accessor:
			if n.variable == l.param && !slices.Contains(c.q.collections[coll], n.name) {
				c.q.collections[coll] = append(c.q.collections[coll], n.name)
			}
		case *binary:
			walk(n.l)
			walk(n.r)
		case *paren:
			walk(n.inner)
		case *call:
			for _, a := range n.args {
				walk(a)
			}
		case *lambda:
			walk(n.body)
		}
	}
	walk(l.body)
}

func (c *checker) checkBinary(n *binary, vars scope) (valueType, error) {
	lt, err := c.check(n.l, vars)
	if err != nil {
		return valueType{}, err
	}
	rt, err := c.check(n.r, vars)
	if err != nil {
		return valueType{}, err
	}
	switch n.op {
	case "&&", "||":
		for _, side := range []struct {
			n node
			t valueType
		}{{n.l, lt}, {n.r, rt}} {
			if side.t != tBool {
				return valueType{}, fmt.Errorf("%s needs conditions on both sides, got %s (%s)", n.op, side.n, side.t)
			}
		}
		return tBool, nil
	}
	if err := checkValues(n); err != nil {
		return valueType{}, err
	}
	// A quoted count compared with a number field is that number (scale=="3").
	n.l, lt = coerce(n.l, lt, rt)
	n.r, rt = coerce(n.r, rt, lt)
	switch {
	case lt == rt && (lt == tString || lt.numeric() || lt == tBool):
	case lt.numeric() && rt.numeric():
	default:
		return valueType{}, fmt.Errorf("cannot compare %s (%s) with %s (%s)", n.l, lt, n.r, rt)
	}
	if n.op != "==" && n.op != "!=" && lt == tBool {
		return valueType{}, fmt.Errorf("cannot order booleans in %s", n)
	}
	return tBool, nil
}

// coerce turns a quoted count compared with an int into that int.
func coerce(lit node, litType, otherType valueType) (node, valueType) {
	s, ok := lit.(*stringLit)
	if !ok || otherType != tInt || !isCount(s.v) {
		return lit, litType
	}
	n, err := strconv.ParseInt(s.v, 10, 64)
	if err != nil {
		return lit, litType
	}
	return &numberLit{text: s.v, v: float64(n), isInt: true, quoted: true}, tInt
}

// isCount reports whether s is a number of things: digits, without leading zeros.
func isCount(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == "" && (len(s) == 1 || s[0] != '0')
}

// checkValues refuses values a field never takes, which would make wait-for wait forever.
func checkValues(n *binary) error {
	for _, pair := range [][2]node{{n.l, n.r}, {n.r, n.l}} {
		name := ""
		switch f := pair[0].(type) {
		case *fieldRef:
			name = f.name
		case *accessor:
			name = f.name
		}
		s, ok := pair[1].(*stringLit)
		if !ok {
			continue
		}
		switch name {
		case "life":
			if !slices.Contains([]string{"alive", "dying", "dead"}, s.v) {
				return fmt.Errorf("invalid life %q; use alive, dying or dead", s.v)
			}
		case "scale":
			if !isCount(s.v) {
				return fmt.Errorf("invalid scale %q; use a number of units", s.v)
			}
		}
	}
	return nil
}

// Evaluation.

// env is what an expression sees: the entity the query is about and the lambda variables.
type env struct {
	self *entity
	vars map[string]*entity
}

func (n *stringLit) eval(*env) any { return n.v }
func (n *numberLit) eval(*env) any {
	if n.isInt || n.quoted {
		return int64(n.v)
	}
	return n.v
}
func (n *boolLit) eval(*env) any    { return n.v }
func (n *paren) eval(e *env) any    { return n.inner.eval(e) }
func (n *fieldRef) eval(e *env) any { return e.self.get(n.name) }
func (n *accessor) eval(e *env) any { return e.vars[n.variable].get(n.name) }
func (n *lambda) eval(*env) any     { return nil }

func (n *call) eval(e *env) any {
	coll := n.args[0].eval(e)
	switch n.fn {
	case "len":
		if s, ok := coll.(string); ok {
			return int64(len(s))
		}
		return int64(len(coll.([]*entity)))
	case "forEach":
		l := n.args[1].(*lambda)
		items := coll.([]*entity)
		if len(items) == 0 {
			return false // as in Juju: nothing to hold for is not holding
		}
		for _, item := range items {
			vars := map[string]*entity{l.param: item}
			for k, v := range e.vars {
				if k != l.param {
					vars[k] = v
				}
			}
			if b, _ := l.body.eval(&env{self: e.self, vars: vars}).(bool); !b {
				return false
			}
		}
		return true
	}
	return nil
}

func (n *binary) eval(e *env) any {
	switch n.op {
	case "&&":
		return truth(n.l.eval(e)) && truth(n.r.eval(e))
	case "||":
		return truth(n.l.eval(e)) || truth(n.r.eval(e))
	}
	l, r := n.l.eval(e), n.r.eval(e)
	cmp, ok := compare(l, r)
	if !ok {
		return n.op == "!="
	}
	switch n.op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

func truth(v any) bool { b, _ := v.(bool); return b }

// compare orders two values of the same type (ints and floats together).
func compare(l, r any) (int, bool) {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	if a, ok := num(l); ok {
		b, ok := num(r)
		if !ok {
			return 0, false
		}
		switch {
		case a < b:
			return -1, true
		case a > b:
			return 1, true
		}
		return 0, true
	}
	switch a := l.(type) {
	case string:
		b, ok := r.(string)
		return strings.Compare(a, b), ok
	case bool:
		b, ok := r.(bool)
		if !ok {
			return 0, false
		}
		if a == b {
			return 0, true
		}
		return 1, true
	}
	return 0, false
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
