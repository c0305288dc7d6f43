// Package observability ships what a Prometheus and a Grafana need to
// watch a Wololo deployment, beside the processes' /metrics
// (services/ops/metrics): alerts.yaml, the alert rules for the failures an
// operator must hear about (no acting leader, a process restarting in a
// loop, a job stalled, a data disk nearly full), with their unit tests in
// alerts_test.yaml for `promtool test rules`; and grafana-dashboard.json,
// a dashboard to import.
//
// The files are embedded so that tests can check them against what the
// processes really export: Queries lists every PromQL expression of both,
// and MetricNames the metric names one of them reads; LabelUses the labels
// an expression selects on, metric by metric (labels.go), and
// AlertTestSeries the input series of alerts_test.yaml, so that a test
// against a running cluster (services/e2e) can check those labels are
// filled and the rules' tests are fed the exported shape. The names are found
// by a small lexer rather than by Prometheus's PromQL parser, which would
// bring the whole Prometheus module into the build for a test; it knows
// the syntax these files use (selectors, ranges, grouping clauses,
// functions, strings) and nothing more.
package observability

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Dashboard is grafana-dashboard.json.
//
//go:embed grafana-dashboard.json
var Dashboard []byte

// Alerts is alerts.yaml.
//
//go:embed alerts.yaml
var Alerts []byte

// DashboardQueries returns the expression of every target of every panel
// of the dashboard, with the panel's title; an error if the JSON does not
// parse or a panel has a target without one.
func DashboardQueries() (map[string][]string, error) {
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafana-dashboard.json: %w", err)
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			return nil, fmt.Errorf("grafana-dashboard.json: panel %q has no query", p.Title)
		}
		for _, t := range p.Targets {
			if strings.TrimSpace(t.Expr) == "" {
				return nil, fmt.Errorf("grafana-dashboard.json: panel %q has a target without an expression", p.Title)
			}
			out[p.Title] = append(out[p.Title], t.Expr)
		}
	}
	return out, nil
}

// AlertQueries returns each alert's expression by its name, read from
// alerts.yaml's `- alert: NAME` and `expr: |` blocks (the layout the file
// keeps; promtool checks the YAML itself).
func AlertQueries() map[string]string {
	out := map[string]string{}
	var name string
	lines := strings.Split(string(Alerts), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if n, ok := strings.CutPrefix(l, "- alert: "); ok {
			name = n
			continue
		}
		if l != "expr: |" || name == "" {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var expr []string
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			expr = append(expr, strings.TrimSpace(next))
			i++
		}
		out[name] = strings.TrimSpace(strings.Join(expr, "\n"))
	}
	return out
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	braces   = regexp.MustCompile(`\{[^}]*\}`)
	brackets = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ident    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
)

// MetricNames returns the metric names expr reads, sorted: its
// identifiers that are not a function or aggregation (followed by "("),
// a keyword, a label (in a selector or a grouping clause), a string or a
// range.
func MetricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{quoted, braces, brackets, grouping} {
		expr = re.ReplaceAllString(expr, " ")
	}
	seen := map[string]bool{}
	for _, m := range ident.FindAllStringSubmatch(expr, -1) {
		name := strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(m[0]), "("), " ")
		if m[1] != "" || keywords[name] {
			continue
		}
		seen[name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
