package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/vigilhq/vigil/notifiers"
)

// This file holds the template form of a webhook body: Go's text/template,
// restricted so that no template can cost more than a fixed CPU time and
// output size, whatever it contains, on save, on test and on a real send.
//
// text/template cannot be interrupted: a render runs until it ends. So the
// cost is bounded in two layers. When a template is saved (and again when a
// notifier is built) checkTemplate reads its parse tree and refuses what
// could be unbounded or only serves to make it so: {{template}}, {{define}}
// and {{block}} (recursion), ranges over anything but data ({{range
// 9223372036854775807}}), nesting deeper than TemplateNestingMax, more than
// TemplateActionsMax actions, number literals beyond ±TemplateNumberMax,
// string literals longer than TemplateLiteralMax, and any function or field
// that is not in the documented set (call, or time's Format, which turns a
// long layout into a long text). Then, at every render, the tree is run with
// a budget (see budget): each range iteration and each function call is a
// step, every range checks the size of what it goes over before the first
// iteration, the bytes that functions produce are counted, the output is
// capped at BodyMax, and a render that passes TemplateRenderBudget stops at
// its next step or write. Between two checks a render evaluates at most one
// range body (at most TemplateActionsMax actions, none of them a loop), so it
// overruns its budget by at most that much.

// Limits on a webhook template.
const (
	// TemplateRenderBudget is the longest a render may take.
	TemplateRenderBudget = 250 * time.Millisecond
	// TemplateRangeMax is the most items one range may go over.
	TemplateRangeMax = 1000
	// TemplateStepsMax is the most range iterations and function calls of
	// one render.
	TemplateStepsMax = 100_000
	// TemplateNestingMax is the deepest nesting of if, with, range and
	// parenthesised pipelines.
	TemplateNestingMax = 16
	// TemplateActionsMax is the most actions ({{...}}) in a template.
	TemplateActionsMax = 5000
	// TemplateNumberMax bounds number literals, in absolute value.
	TemplateNumberMax = 1_000_000
	// TemplateLiteralMax is the longest string literal, in bytes.
	TemplateLiteralMax = 4096
	// templateWorkMax is the most bytes the functions of one render may
	// produce in all (json, print, printf, ...), output or not.
	templateWorkMax = 4 * BodyMax
)

// templateFuncs are the functions a template may call: Vigil's own and the
// builtins of text/template that cost little, or that budget wraps. The
// builtin call is not among them.
var templateFuncs = []string{
	"json", "rfc3339", "payload",
	"and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "len", "index", "slice",
	"print", "printf", "println", "html", "js", "urlquery",
}

// Names of the functions the render adds to a checked tree; a template
// cannot call them itself, since checkTemplate refuses unknown functions.
const (
	stepFunc  = "vigil_step"
	rangeFunc = "vigil_range"
)

// timeMethods are the methods of time.Time and time.Duration a template
// may call: each returns a short, fixed-size value.
var timeMethods = []string{
	"UTC", "Unix", "UnixMilli", "Year", "Month", "Day", "Hour", "Minute", "Second", "Weekday", "YearDay",
	"IsZero", "String", "Seconds", "Minutes", "Hours", "Milliseconds",
}

// templateNames are the field and method names a template may use: every
// field and method of the notification and of the default payload, at any
// depth, and timeMethods.
var templateNames = func() map[string]bool {
	names := map[string]bool{}
	for _, m := range timeMethods {
		names[m] = true
	}
	seen := map[reflect.Type]bool{}
	timeType, durationType := reflect.TypeFor[time.Time](), reflect.TypeFor[time.Duration]()
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if seen[t] || t == timeType || t == durationType || t.PkgPath() == "" && t.Kind() != reflect.Struct {
			return
		}
		seen[t] = true
		for _, pt := range []reflect.Type{t, reflect.PointerTo(t)} {
			for i := range pt.NumMethod() {
				m := pt.Method(i)
				names[m.Name] = true
				for j := range m.Type.NumOut() {
					walk(m.Type.Out(j))
				}
			}
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				names[f.Name] = true
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[notifiers.Notification]())
	walk(reflect.TypeFor[Payload]())
	return names
}()

// TemplateError is a template refused when it is checked or rendered. Its
// message names the problem and, when it has one, the line.
type TemplateError struct {
	Line int
	Msg  string
	// Slow is set when the render ran out of time rather than of steps or
	// bytes: on a busy machine that can happen to a template that is fine.
	Slow bool
}

// templateFailure classifies a render error at send time: a render that
// ran out of time may be retried (each attempt stops within the budget
// again), every other refusal is permanent.
func templateFailure(err error) error {
	var te *TemplateError
	if errors.As(err, &te) && te.Slow {
		return err
	}
	return notifiers.Permanent(err)
}

func (e *TemplateError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// checkTemplate parses text and checks it against the limits, then, with
// samples, renders it on a sample of each event within the budget.
func checkTemplate(text string, samples bool) error {
	tmpl, err := compileTemplate(text)
	if err != nil {
		return fmt.Errorf("template: %w", err)
	}
	if !samples {
		return nil
	}
	for _, n := range sampleNotifications() {
		if _, err := tmpl.render(n); err != nil {
			if n.Event.IsMonitorEvent() {
				// The one sample whose payload differs in shape: say so.
				return fmt.Errorf("template: on a sample %s notification, which has no incident: %w", n.Event, err)
			}
			return fmt.Errorf("template: %w", err)
		}
	}
	return nil
}

// boundedTemplate is a checked template, rewritten so that a render keeps
// to its budget.
type boundedTemplate struct {
	tmpl *template.Template
}

// compileTemplate parses text, checks it and rewrites its tree with the
// budget's steps.
func compileTemplate(text string) (*boundedTemplate, error) {
	if len(text) > TemplateMax {
		return nil, fmt.Errorf("must be at most %d bytes", TemplateMax)
	}
	tmpl, err := template.New("webhook").Option("missingkey=error").Funcs(newBudget().funcs()).Parse(text)
	if err != nil {
		return nil, err
	}
	if len(tmpl.Templates()) > 1 {
		return nil, errors.New("define and block are not supported: a template is one body")
	}
	c := &checker{tree: tmpl.Tree}
	c.list(tmpl.Tree.Root, 0)
	if c.err != nil {
		return nil, c.err
	}
	if c.actions > TemplateActionsMax {
		return nil, fmt.Errorf("has %d actions; at most %d", c.actions, TemplateActionsMax)
	}
	if err := rewrite(tmpl); err != nil {
		return nil, err
	}
	return &boundedTemplate{tmpl: tmpl}, nil
}

// checker walks a parse tree and keeps the first problem it finds.
type checker struct {
	tree    *parse.Tree
	err     error
	actions int
}

func (c *checker) fail(n parse.Node, format string, args ...any) {
	if c.err != nil {
		return
	}
	line := 0
	if loc, _ := c.tree.ErrorContext(n); loc != "" {
		// loc is "webhook:LINE:COL".
		parts := strings.Split(loc, ":")
		if len(parts) >= 2 {
			line, _ = strconv.Atoi(parts[1])
		}
	}
	c.err = &TemplateError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (c *checker) list(l *parse.ListNode, depth int) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		c.node(n, depth)
	}
}

func (c *checker) node(n parse.Node, depth int) {
	if c.err != nil {
		return
	}
	if depth > TemplateNestingMax {
		c.fail(n, "nested deeper than %d", TemplateNestingMax)
		return
	}
	switch n := n.(type) {
	case *parse.TextNode, *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
	case *parse.ActionNode:
		c.actions++
		c.pipe(n.Pipe, depth)
	case *parse.IfNode:
		c.actions++
		c.branch(&n.BranchNode, depth)
	case *parse.WithNode:
		c.actions++
		c.branch(&n.BranchNode, depth)
	case *parse.RangeNode:
		c.actions++
		if !rangesOverData(n.Pipe) {
			c.fail(n, "range must go over a field, such as {{range .Monitor.Tags}}, not %s", n.Pipe)
			return
		}
		c.branch(&n.BranchNode, depth)
	case *parse.TemplateNode:
		c.fail(n, "{{template}} is not supported: a template is one body")
	default:
		c.fail(n, "%s is not supported", n)
	}
}

func (c *checker) branch(b *parse.BranchNode, depth int) {
	c.pipe(b.Pipe, depth)
	c.list(b.List, depth+1)
	c.list(b.ElseList, depth+1)
}

func (c *checker) pipe(p *parse.PipeNode, depth int) {
	if p == nil {
		return
	}
	if depth > TemplateNestingMax {
		c.fail(p, "nested deeper than %d", TemplateNestingMax)
		return
	}
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			c.arg(arg, depth)
		}
	}
}

func (c *checker) arg(n parse.Node, depth int) {
	if c.err != nil {
		return
	}
	switch n := n.(type) {
	case *parse.IdentifierNode:
		if !slices.Contains(templateFuncs, n.Ident) {
			c.fail(n, "function %q is not available; the functions are %s", n.Ident, strings.Join(templateFuncs, ", "))
		}
	case *parse.FieldNode:
		c.names(n, n.Ident)
	case *parse.VariableNode:
		c.names(n, n.Ident[1:])
	case *parse.ChainNode:
		c.arg(n.Node, depth)
		c.names(n, n.Field)
	case *parse.PipeNode:
		c.pipe(n, depth+1)
	case *parse.NumberNode:
		c.number(n)
	case *parse.StringNode:
		if len(n.Text) > TemplateLiteralMax {
			c.fail(n, "a string literal of %d bytes; at most %d", len(n.Text), TemplateLiteralMax)
		}
	case *parse.DotNode, *parse.NilNode, *parse.BoolNode:
	default:
		c.fail(n, "%s is not supported", n)
	}
}

func (c *checker) names(n parse.Node, idents []string) {
	for _, id := range idents {
		if !templateNames[id] {
			c.fail(n, "%q is not a field or method a template may use", id)
			return
		}
	}
}

func (c *checker) number(n *parse.NumberNode) {
	switch {
	case n.IsComplex:
		c.fail(n, "complex number %s is not supported", n.Text)
	case n.IsInt && (n.Int64 > TemplateNumberMax || n.Int64 < -TemplateNumberMax),
		n.IsUint && n.Uint64 > TemplateNumberMax,
		n.IsFloat && (n.Float64 > TemplateNumberMax || n.Float64 < -TemplateNumberMax):
		c.fail(n, "number %s is too large; literals must be within ±%d", n.Text, TemplateNumberMax)
	}
}

// rangesOverData reports whether a range pipeline is one field, chain of
// fields, variable or dot: data whose size rangeFunc checks, never a
// literal or the result of a function.
func rangesOverData(p *parse.PipeNode) bool {
	if len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode, *parse.VariableNode, *parse.DotNode:
		return true
	case *parse.ChainNode:
		_, ok := a.Node.(*parse.PipeNode)
		return !ok
	}
	return false
}

// rewrite adds the budget to a checked tree: every range's value goes
// through rangeFunc, and every iteration starts with stepFunc.
func rewrite(tmpl *template.Template) error {
	helper, err := template.New("helper").Funcs(newBudget().funcs()).Parse("{{" + stepFunc + "}}{{. | " + rangeFunc + "}}")
	if err != nil {
		return fmt.Errorf("build the budget's steps: %w", err)
	}
	step := helper.Tree.Root.Nodes[0]
	bound := helper.Tree.Root.Nodes[1].(*parse.ActionNode).Pipe.Cmds[1]
	var walk func(l *parse.ListNode)
	walk = func(l *parse.ListNode) {
		if l == nil {
			return
		}
		for _, n := range l.Nodes {
			switch n := n.(type) {
			case *parse.IfNode:
				walk(n.List)
				walk(n.ElseList)
			case *parse.WithNode:
				walk(n.List)
				walk(n.ElseList)
			case *parse.RangeNode:
				n.Pipe.Cmds = append(n.Pipe.Cmds, bound)
				walk(n.List)
				walk(n.ElseList)
				n.List.Nodes = append([]parse.Node{step}, n.List.Nodes...)
			}
		}
	}
	walk(tmpl.Tree.Root)
	return nil
}

// render runs the template on n within the budget.
func (t *boundedTemplate) render(n *notifiers.Notification) ([]byte, error) {
	b := newBudget()
	run, err := t.tmpl.Clone()
	if err != nil {
		return nil, fmt.Errorf("clone template: %w", err)
	}
	run.Funcs(b.funcs())
	var buf bytes.Buffer
	if err := run.Execute(&budgetWriter{buf: &buf, b: b}, n); err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			// The budget's own words, without text/template's prefix.
			return nil, te
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// budget is the allowance of one render.
type budget struct {
	deadline time.Time
	steps    int
	work     int
}

func newBudget() *budget {
	return &budget{deadline: time.Now().Add(TemplateRenderBudget)}
}

// step counts one iteration or call, and stops the render when it has
// used up its steps or its time.
func (b *budget) step() error {
	b.steps++
	if b.steps > TemplateStepsMax {
		return &TemplateError{Msg: fmt.Sprintf("takes more than %d steps (range iterations and function calls)", TemplateStepsMax)}
	}
	return b.clock()
}

func (b *budget) clock() error {
	if time.Now().After(b.deadline) {
		return &TemplateError{Msg: fmt.Sprintf("takes longer than %s to render", TemplateRenderBudget), Slow: true}
	}
	return nil
}

// charge counts n bytes made by a function.
func (b *budget) charge(n int) error {
	if err := b.step(); err != nil {
		return err
	}
	b.work += n
	if b.work > templateWorkMax {
		return &TemplateError{Msg: fmt.Sprintf("its functions produce more than %d bytes", templateWorkMax)}
	}
	return nil
}

// room is how many more bytes functions may produce.
func (b *budget) room() int { return templateWorkMax - b.work }

// funcs are the template functions, bound to b.
func (b *budget) funcs() template.FuncMap {
	text := func(s string) (string, error) {
		if err := b.charge(len(s)); err != nil {
			return "", err
		}
		return s, nil
	}
	sized := func(args []any) error {
		n := 0
		for _, a := range args {
			if s, ok := a.(string); ok {
				n += len(s)
			} else {
				n += 32
			}
		}
		if n > b.room() {
			return &TemplateError{Msg: fmt.Sprintf("its functions produce more than %d bytes", templateWorkMax)}
		}
		return nil
	}
	return template.FuncMap{
		stepFunc: func() (string, error) { return "", b.step() },
		rangeFunc: func(v any) (any, error) {
			if err := b.step(); err != nil {
				return nil, err
			}
			return v, checkRange(v)
		},
		"json": func(v any) (string, error) {
			out, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			return text(string(out))
		},
		"rfc3339": func(v any) (string, error) {
			if err := b.step(); err != nil {
				return "", err
			}
			switch t := v.(type) {
			case time.Time:
				return t.UTC().Format(time.RFC3339Nano), nil
			case *time.Time:
				if t == nil {
					return "", nil
				}
				return t.UTC().Format(time.RFC3339Nano), nil
			}
			return "", fmt.Errorf("rfc3339: %T is not a time", v)
		},
		// A report's payload has a shape of its own (ReportPayload).
		"payload": func(n *notifiers.Notification) (any, error) {
			if n.Event.IsReport() {
				return NewReportPayload(n), b.step()
			}
			return NewPayload(n), b.step()
		},
		"print": func(args ...any) (string, error) {
			if err := sized(args); err != nil {
				return "", err
			}
			return text(fmt.Sprint(args...))
		},
		"println": func(args ...any) (string, error) {
			if err := sized(args); err != nil {
				return "", err
			}
			return text(fmt.Sprintln(args...))
		},
		"printf": func(format string, args ...any) (string, error) {
			if err := checkFormat(format); err != nil {
				return "", err
			}
			if err := sized(append(args, format)); err != nil {
				return "", err
			}
			return text(fmt.Sprintf(format, args...))
		},
		"html": func(args ...any) (string, error) {
			if err := sized(args); err != nil {
				return "", err
			}
			return text(template.HTMLEscaper(args...))
		},
		"js": func(args ...any) (string, error) {
			if err := sized(args); err != nil {
				return "", err
			}
			return text(template.JSEscaper(args...))
		},
		"urlquery": func(args ...any) (string, error) {
			if err := sized(args); err != nil {
				return "", err
			}
			return text(template.URLQueryEscaper(args...))
		},
	}
}

// checkRange refuses to range over more than TemplateRangeMax items, over a
// number larger than that, or over a function or channel.
func checkRange(v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	n := 0
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		n = rv.Len()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if rv.Int() > TemplateRangeMax {
			n = TemplateRangeMax + 1
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if rv.Uint() > TemplateRangeMax {
			n = TemplateRangeMax + 1
		}
	case reflect.Func, reflect.Chan:
		return &TemplateError{Msg: "range over a function or a channel is not supported"}
	}
	if n > TemplateRangeMax {
		return &TemplateError{Msg: fmt.Sprintf("range over more than %d items", TemplateRangeMax)}
	}
	return nil
}

// checkFormat refuses printf formats whose width or precision could make
// a long text from a short one: * (taken from an argument), or more than
// three digits.
func checkFormat(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		digits := 0
		for ; i < len(format); i++ {
			ch := format[i]
			switch {
			case ch == '*':
				return &TemplateError{Msg: "printf: a width or precision from an argument (*) is not supported"}
			case ch >= '0' && ch <= '9':
				digits++
				if digits > 3 {
					return &TemplateError{Msg: "printf: widths and precisions must be below 1000"}
				}
				continue
			case ch == '.':
				digits = 0
				continue
			case strings.IndexByte("+-# [", ch) >= 0 || ch == ']':
				if ch == '[' || ch == ']' {
					digits = 0
				}
				continue
			}
			break
		}
	}
	return nil
}

// budgetWriter caps the output at BodyMax and stops a render that is past
// its time at its next write.
type budgetWriter struct {
	buf *bytes.Buffer
	b   *budget
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > BodyMax {
		return 0, &TemplateError{Msg: fmt.Sprintf("renders a body larger than %d bytes", BodyMax)}
	}
	if err := w.b.clock(); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// sampleNotifications are what a template is tried on when it is saved: one
// of each event, so that a template cannot hide its cost behind
// {{if eq .Event ...}}.
func sampleNotifications() []*notifiers.Notification {
	var out []*notifiers.Notification
	for _, ev := range []notifiers.Event{notifiers.EventOpened, notifiers.EventResolved, notifiers.EventReminder,
		notifiers.EventUpdated, notifiers.EventTest, notifiers.EventMonitorUndeclared, notifiers.EventMonitorRedeclared,
		notifiers.EventMonitorLate, notifiers.EventMonitorFlapping, notifiers.EventMonitorStable, notifiers.EventGrouped} {
		n := sampleNotification()
		n.Event = ev
		if ev != notifiers.EventResolved {
			n.Incident.ResolvedAt = nil
		}
		if ev == notifiers.EventGrouped {
			n.Group = []notifiers.GroupItem{{Incident: n.Incident, Monitor: n.Monitor}, {Incident: n.Incident, Monitor: n.Monitor}}
		}
		if ev.IsMonitorEvent() {
			// No incident: the payload's "incident" is null.
			n.Incident = notifiers.Incident{Summary: "sample is no longer declared by source \"sample\""}
			n.Monitor.Source, n.EventAt = "sample", n.SentAt
		}
		out = append(out, n)
	}
	return out
}
