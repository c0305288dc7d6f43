package datagen

// A deliberately naive, independent reading of docs/queries.md, used only to
// check that the generated data exercises every query.

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var (
	numberRE   = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	durationRE = regexp.MustCompile(`^(?:([0-9]+) days?, )?([0-9]{1,2}):([0-9]{2}):([0-9]{2})$`)
)

func parseNumber(s string) (float64, bool) {
	if !numberRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// parseBool returns 1, 0 or -1 (missing).
func parseBool(s string) int {
	switch strings.ToLower(s) {
	case "true", "1":
		return 1
	case "false", "0":
		return 0
	}
	return -1
}

func parseDuration(s string) (int64, bool) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	var d int64
	if m[1] != "" {
		d, _ = strconv.ParseInt(m[1], 10, 64)
	}
	h, _ := strconv.ParseInt(m[2], 10, 64)
	mi, _ := strconv.ParseInt(m[3], 10, 64)
	se, _ := strconv.ParseInt(m[4], 10, 64)
	return d*86400 + h*3600 + mi*60 + se, true
}

// table is a parsed CSV file: well-formed rows only, columns by name.
type table struct {
	col       map[string]int
	rows      [][]string
	malformed int
}

func (t *table) get(row []string, name string) string { return row[t.col[name]] }

func readTable(tb testing.TB, data []byte) *table {
	tb.Helper()
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		tb.Fatalf("header: %v", err)
	}
	t := &table{col: map[string]int{}}
	for i, h := range header {
		t.col[h] = i
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("csv: %v", err)
		}
		if len(rec) != len(header) {
			t.malformed++
			continue
		}
		t.rows = append(t.rows, rec)
	}
	return t
}

type answers struct {
	q1, q2 []string
	q3     []string // civ,wins,played,win_pct
	q4     []string // rank,civ,players
}

func (a answers) String() string {
	return fmt.Sprintf("q1=%d q2=%d q3=%d q4=%v", len(a.q1), len(a.q2), len(a.q3), a.q4)
}

func runQueries(m, p *table) answers {
	var a answers
	q1 := map[string]bool{}
	q3m, q4m := map[string]bool{}, map[string]bool{}
	for _, r := range m.rows {
		tok := m.get(r, "token")
		avg, okA := parseNumber(m.get(r, "average_rating"))
		dur, okD := parseDuration(m.get(r, "duration"))
		srv := m.get(r, "server")
		if okA && okD && avg > 2000 && dur > 7200 && (srv == "koreacentral" || srv == "southeastasia" || srv == "eastus") {
			q1[tok] = true
		}
		ladder, mp := m.get(r, "ladder"), m.get(r, "map")
		if ladder == "RM_1v1" && mp == "arena" && parseBool(m.get(r, "mirror")) == 0 {
			q3m[tok] = true
		}
		if ladder == "RM_TEAM" && mp == "islands" {
			q4m[tok] = true
		}
	}
	for tok := range q1 {
		a.q1 = append(a.q1, tok)
	}
	sort.Strings(a.q1)

	type pl struct {
		rating float64
		hasR   bool
		winner int
	}
	groups := map[string][]pl{}
	played, wins, pro := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range p.rows {
		match := p.get(r, "match")
		rating, okR := parseNumber(p.get(r, "rating"))
		w := parseBool(p.get(r, "winner"))
		groups[match] = append(groups[match], pl{rating, okR, w})
		civ := p.get(r, "civ")
		if q3m[match] && civ != "" && w >= 0 {
			played[civ]++
			if w == 1 {
				wins[civ]++
			}
		}
		if q4m[match] && okR && rating > 2000 && civ != "" {
			pro[civ]++
		}
	}
	for match, g := range groups {
		if len(g) != 2 || !g[0].hasR || !g[1].hasR || g[0].winner+g[1].winner != 1 || g[0].winner < 0 || g[1].winner < 0 {
			continue
		}
		w, l := g[0], g[1]
		if l.winner == 1 {
			w, l = l, w
		}
		if w.rating > 1000 && 10*w.rating <= 7*l.rating {
			a.q2 = append(a.q2, match)
		}
	}
	sort.Strings(a.q2)
	for civ, n := range played {
		a.q3 = append(a.q3, fmt.Sprintf("%s,%d,%d,%.4f", civ, wins[civ], n, 100*float64(wins[civ])/float64(n)))
	}
	sort.Strings(a.q3)
	civs := make([]string, 0, len(pro))
	for civ := range pro {
		civs = append(civs, civ)
	}
	slices.SortFunc(civs, func(x, y string) int {
		if pro[x] != pro[y] {
			return pro[y] - pro[x]
		}
		return strings.Compare(x, y)
	})
	for i, civ := range civs[:min(5, len(civs))] {
		a.q4 = append(a.q4, fmt.Sprintf("%d,%s,%d", i+1, civ, pro[civ]))
	}
	return a
}
