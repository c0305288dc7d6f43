package observability

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// AlertTests is alerts_test.yaml, the alert rules' unit tests.
//
//go:embed alerts_test.yaml
var AlertTests []byte

// LabelUse is one place an expression selects on a label of a metric: a
// matcher of its selector (Op "=", "!=", "=~" or "!~" and the Value it
// compares with), a grouping or matching clause (by, on, group_left,
// group_right) whose scope reads the metric, the source label of a
// label_replace or label_join over it, or a legend's {{label}} (those
// three with Op and Value empty). Each says the metric's series must carry
// the label, filled: an empty one groups every series into one, and
// matches no value an alert compares with.
type LabelUse struct {
	Metric, Label string
	Op, Value     string
}

func (u LabelUse) String() string {
	if u.Op == "" {
		return u.Metric + " by " + u.Label
	}
	return fmt.Sprintf("%s{%s%s%q}", u.Metric, u.Label, u.Op, u.Value)
}

// Target is one query of a dashboard panel, with its legend.
type Target struct {
	Panel, Expr, Legend string
}

// DashboardTargets returns every target of every panel of the dashboard
// that is not a row.
func DashboardTargets() ([]Target, error) {
	var d struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr         string `json:"expr"`
				LegendFormat string `json:"legendFormat"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafana-dashboard.json: %w", err)
	}
	var out []Target
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		for _, t := range p.Targets {
			out = append(out, Target{Panel: p.Title, Expr: t.Expr, Legend: t.LegendFormat})
		}
	}
	return out, nil
}

var legendLabel = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// Uses is what the target selects on: LabelUses of its expression, and
// each label its legend shows, of every metric the expression reads.
func (t Target) Uses() []LabelUse {
	uses := LabelUses(t.Expr)
	for _, m := range legendLabel.FindAllStringSubmatch(t.Legend, -1) {
		for _, name := range MetricNames(t.Expr) {
			uses = append(uses, LabelUse{Metric: name, Label: m[1]})
		}
	}
	return uses
}

// clauses are the keywords followed by a list of labels.
var clauses = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// token is one lexeme of an expression: an identifier, a string (its
// value unquoted), a number, a range ("[...]", skipped whole), or an
// operator or punctuation.
type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number, 'r' range, 'p' punctuation
	text string
}

// tokens splits expr as LabelUses reads it.
func tokens(expr string) []token {
	var out []token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			raw := expr[i:min(j+1, len(expr))]
			val := strings.Trim(raw, string(c))
			if c == '"' {
				if v, err := strconv.Unquote(raw); err == nil {
					val = v
				}
			}
			out = append(out, token{'s', val})
			i = j + 1
		case c == '[':
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				j = len(expr) - i - 1
			}
			out = append(out, token{'r', expr[i : i+j+1]})
			i += j + 1
		case c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(expr) && (expr[j] == '_' || expr[j] == ':' || expr[j] >= 'a' && expr[j] <= 'z' || expr[j] >= 'A' && expr[j] <= 'Z' || expr[j] >= '0' && expr[j] <= '9') {
				j++
			}
			out = append(out, token{'i', expr[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.':
			j := i + 1
			for j < len(expr) && (expr[j] >= '0' && expr[j] <= '9' || expr[j] == '.' || expr[j] == 'e') {
				j++
			}
			out = append(out, token{'n', expr[i:j]})
			i = j
		default:
			if i+1 < len(expr) && strings.Contains("=~ != !~ == >= <=", expr[i:i+2]) {
				out = append(out, token{'p', expr[i : i+2]})
				i += 2
				continue
			}
			out = append(out, token{'p', string(c)})
			i++
		}
	}
	return out
}

// LabelUses returns where expr selects on a label, metric by metric (see
// LabelUse), in the order they appear. Like MetricNames it knows the
// syntax these files use and nothing more: the scope of "by (...)" is the
// parenthesised argument that follows it (or, written after, the one that
// precedes it); that of "on (...)", "group_left (...)" and
// "group_right (...)" is the innermost parenthesis around the binary
// operation, or the whole expression.
func LabelUses(expr string) []LabelUse {
	toks := tokens(expr)
	match := map[int]int{}              // '(' or '{' index -> its closing index, and back
	enclosing := make([]int, len(toks)) // innermost '(' around each token, -1 for none
	var stack []int
	for i, t := range toks {
		enclosing[i] = -1
		for k := len(stack) - 1; k >= 0; k-- {
			if toks[stack[k]].text == "(" {
				enclosing[i] = stack[k]
				break
			}
		}
		switch t.text {
		case "(", "{":
			if t.kind == 'p' {
				stack = append(stack, i)
			}
		case ")", "}":
			if t.kind == 'p' && len(stack) > 0 {
				open := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				match[open], match[i] = i, open
			}
		}
	}
	text := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].text
	}
	// Which tokens are metric names: identifiers outside braces and
	// clauses' label lists, neither a keyword nor a call.
	metric := make([]bool, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'p' && t.text == "{" {
			i = match[i]
			continue
		}
		if t.kind != 'i' {
			continue
		}
		if keywords[t.text] {
			if clauses[t.text] && text(i+1) == "(" {
				i = match[i+1] // the clause's labels
			}
			continue
		}
		next := text(i + 1)
		if next == "(" || next == "by" || next == "without" {
			continue
		}
		metric[i] = true
	}
	metricsIn := func(from, to int) []string {
		var names []string
		for i := from; i <= to && i < len(toks); i++ {
			if metric[i] && !contains(names, toks[i].text) {
				names = append(names, toks[i].text)
			}
		}
		return names
	}
	var uses []LabelUse
	add := func(metrics []string, label, op, value string) {
		for _, m := range metrics {
			uses = append(uses, LabelUse{Metric: m, Label: label, Op: op, Value: value})
		}
	}
	for i, t := range toks {
		switch {
		case metric[i] && text(i+1) == "{":
			// NAME{label op "value", ...}
			end := match[i+1]
			for j := i + 2; j+2 < end; j += 4 {
				if toks[j].kind == 'i' && toks[j+2].kind == 's' {
					add([]string{t.text}, toks[j].text, toks[j+1].text, toks[j+2].text)
				}
			}
		case t.kind == 'i' && (t.text == "by" || t.text == "on" || t.text == "group_left" || t.text == "group_right") && text(i+1) == "(":
			end := match[i+1]
			var scope []string
			switch {
			case t.text != "by":
				if open := enclosing[i]; open >= 0 {
					scope = metricsIn(open, match[open])
				} else {
					scope = metricsIn(0, len(toks)-1)
				}
			case text(end+1) == "(":
				scope = metricsIn(end+1, match[end+1])
			case text(i-1) == ")":
				scope = metricsIn(match[i-1], i-1)
			}
			for j := i + 2; j < end; j++ {
				if toks[j].kind == 'i' {
					add(scope, toks[j].text, "", "")
				}
			}
		case t.kind == 'i' && (t.text == "label_replace" || t.text == "label_join") && text(i+1) == "(":
			// label_replace(v, dst, replacement, src, regex);
			// label_join(v, dst, separator, src...).
			end := match[i+1]
			var args [][2]int
			from := i + 2
			for j := from; j <= end; j++ {
				if j == end || toks[j].text == "," && enclosing[j] == i+1 {
					args = append(args, [2]int{from, j - 1})
					from = j + 1
				} else if toks[j].text == "(" || toks[j].text == "{" {
					j = match[j]
				}
			}
			if len(args) < 4 {
				continue
			}
			srcs := args[3:4]
			if t.text == "label_join" {
				srcs = args[3:]
			}
			for _, a := range srcs {
				if a[0] == a[1] && toks[a[0]].kind == 's' {
					add(metricsIn(args[0][0], args[0][1]), toks[a[0]].text, "", "")
				}
			}
		}
	}
	return uses
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Series is one input series of alerts_test.yaml: its metric and labels.
type Series struct {
	Metric string
	Labels map[string]string
}

var seriesLine = regexp.MustCompile(`^\s*-\s*series:\s*'([^']*)'\s*$`)

// AlertTestSeries returns every input series alerts_test.yaml feeds the
// rules (its `- series: '...'` lines).
func AlertTestSeries() ([]Series, error) {
	var out []Series
	for _, l := range strings.Split(string(AlertTests), "\n") {
		m := seriesLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		toks := tokens(m[1])
		if len(toks) == 0 || toks[0].kind != 'i' {
			return nil, fmt.Errorf("alerts_test.yaml: series %q: no metric name", m[1])
		}
		s := Series{Metric: toks[0].text, Labels: map[string]string{}}
		if len(toks) > 1 {
			if toks[1].text != "{" || toks[len(toks)-1].text != "}" {
				return nil, fmt.Errorf("alerts_test.yaml: series %q: not NAME{labels}", m[1])
			}
			for j := 2; j+2 < len(toks); j += 4 {
				if toks[j].kind != 'i' || toks[j+1].text != "=" || toks[j+2].kind != 's' {
					return nil, fmt.Errorf("alerts_test.yaml: series %q: not NAME{label=\"value\", ...}", m[1])
				}
				s.Labels[toks[j].text] = toks[j+2].text
			}
		}
		out = append(out, s)
	}
	return out, nil
}
