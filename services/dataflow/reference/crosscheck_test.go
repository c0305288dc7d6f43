package reference

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// naive answers the queries the way the SQL of docs/queries.md reads: it loads
// both tables into memory, types every value, and groups by brute force. It
// checks the streaming bookkeeping of Evaluate (sets, per-match Q2 state,
// counters) on random data.
func naive(t *testing.T, matches, players string) (q1, q2, q3, q4 string) {
	t.Helper()
	type mRow struct {
		token, ladder, mapName, server string
		mirror, mirrorOK               bool
		avg                            *big.Rat
		dur                            *big.Int
	}
	type pRow struct {
		match, civ       string
		rating           *big.Rat
		winner, winnerOK bool
	}
	read := func(s string) (map[string]int, [][]string) {
		r := csv.NewReader(strings.NewReader(s))
		r.FieldsPerRecord = -1
		var recs [][]string
		for {
			rec, err := r.Read()
			if err != nil {
				if _, ok := err.(*csv.ParseError); ok {
					continue
				}
				break
			}
			recs = append(recs, rec)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			if _, ok := col[h]; !ok {
				col[h] = i
			}
		}
		var rows [][]string
		for _, rec := range recs[1:] {
			if len(rec) == len(recs[0]) {
				rows = append(rows, rec)
			}
		}
		return col, rows
	}
	mc, mrecs := read(matches)
	var m []mRow
	for _, rec := range mrecs {
		r := mRow{token: rec[mc["token"]], ladder: rec[mc["ladder"]], mapName: rec[mc["map"]], server: rec[mc["server"]]}
		r.mirror, r.mirrorOK = parseBool(rec[mc["mirror"]])
		r.avg, _ = parseNumber(rec[mc["average_rating"]])
		r.dur, _ = parseDuration(rec[mc["duration"]])
		m = append(m, r)
	}
	pc, precs := read(players)
	var p []pRow
	for _, rec := range precs {
		r := pRow{match: rec[pc["match"]], civ: rec[pc["civ"]]}
		r.rating, _ = parseNumber(rec[pc["rating"]])
		r.winner, r.winnerOK = parseBool(rec[pc["winner"]])
		p = append(p, r)
	}

	// Q1
	set := map[string]bool{}
	for _, r := range m {
		if r.avg != nil && r.avg.Cmp(big.NewRat(2000, 1)) > 0 &&
			(r.server == "koreacentral" || r.server == "southeastasia" || r.server == "eastus") &&
			r.dur != nil && r.dur.Cmp(big.NewInt(7200)) > 0 {
			set[r.token] = true
		}
	}
	q1 = tokensOf(set)

	// Q2
	groups := map[string][]pRow{}
	for _, r := range p {
		groups[r.match] = append(groups[r.match], r)
	}
	set = map[string]bool{}
	for match, rows := range groups {
		var w1, w0, rated int
		var maxW, maxL *big.Rat
		for _, r := range rows {
			if r.winnerOK && r.winner {
				w1++
				if r.rating != nil && (maxW == nil || r.rating.Cmp(maxW) > 0) {
					maxW = r.rating
				}
			}
			if r.winnerOK && !r.winner {
				w0++
				if r.rating != nil && (maxL == nil || r.rating.Cmp(maxL) > 0) {
					maxL = r.rating
				}
			}
			if r.rating != nil {
				rated++
			}
		}
		if len(rows) == 2 && w1 == 1 && w0 == 1 && rated == 2 && maxW != nil && maxL != nil &&
			maxW.Cmp(big.NewRat(1000, 1)) > 0 &&
			new(big.Rat).Mul(big.NewRat(10, 1), maxW).Cmp(new(big.Rat).Mul(big.NewRat(7, 1), maxL)) <= 0 {
			set[match] = true
		}
	}
	q2 = tokensOf(set)

	// Q3 and Q4
	q3m, q4m := map[string]bool{}, map[string]bool{}
	for _, r := range m {
		if r.ladder == "RM_1v1" && r.mapName == "arena" && r.mirrorOK && !r.mirror {
			q3m[r.token] = true
		}
		if r.ladder == "RM_TEAM" && r.mapName == "islands" {
			q4m[r.token] = true
		}
	}
	wins, played, count := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, r := range p {
		if q3m[r.match] && r.civ != "" && r.winnerOK {
			played[r.civ]++
			if r.winner {
				wins[r.civ]++
			}
		}
		if q4m[r.match] && r.rating != nil && r.rating.Cmp(big.NewRat(2000, 1)) > 0 && r.civ != "" {
			count[r.civ]++
		}
	}
	var civs []string
	for c := range played {
		civs = append(civs, c)
	}
	sort.Strings(civs)
	var b strings.Builder
	b.WriteString("civ,wins,played,win_pct\n")
	for _, c := range civs {
		fmt.Fprintf(&b, "%s,%d,%d,%.4f\n", c, wins[c], played[c], float64(100*wins[c])/float64(played[c]))
	}
	q3 = b.String()
	civs = civs[:0]
	for c := range count {
		civs = append(civs, c)
	}
	sort.Slice(civs, func(i, j int) bool {
		return count[civs[i]] > count[civs[j]] || count[civs[i]] == count[civs[j]] && civs[i] < civs[j]
	})
	b.Reset()
	b.WriteString("rank,civ,players\n")
	for i, c := range civs {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "%d,%s,%d\n", i+1, c, count[c])
	}
	q4 = b.String()
	return
}

func tokensOf(set map[string]bool) string {
	var ts []string
	for t := range set {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return "token\n" + strings.Join(ts, "\n") + map[bool]string{true: "\n"}[len(ts) > 0]
}

func pick(r *rand.Rand, xs ...string) string { return xs[r.Intn(len(xs))] }

// randomDataset draws small files whose values hit every boundary often;
// tokens, civs and values need no quoting, so naive can format plainly.
func randomDataset(r *rand.Rand) (matches, players string) {
	token := func() string { return fmt.Sprintf("t%d", r.Intn(12)) }
	var m, p bytes.Buffer
	m.WriteString("server,token,x,ladder,mirror,average_rating,map,duration\n")
	for i, n := 0, r.Intn(30); i < n; i++ {
		fmt.Fprintf(&m, "%s,%s,,%s,%s,%s,%s,%s\n",
			pick(r, "eastus", "koreacentral", "southeastasia", "ukwest", ""),
			token(),
			pick(r, "RM_1v1", "RM_TEAM", "DM_1v1"),
			pick(r, "true", "false", "0", "1", "False", "", "no"),
			pick(r, "2000", "2000.5", "2001", "1999", "", "abc", "3000.0"),
			pick(r, "arena", "islands", "arabia"),
			pick(r, "2:00:00", "2:00:01", "\"1 day, 0:00:00\"", "0:10:00", "", "3:00", "12:00:00"))
		if r.Intn(10) == 0 {
			m.WriteString("broken,row\n")
		}
	}
	p.WriteString("winner,match,civ,rating\n")
	for i, n := 0, r.Intn(60); i < n; i++ {
		fmt.Fprintf(&p, "%s,%s,%s,%s\n",
			pick(r, "true", "false", "TRUE", "0", "1", "", "maybe"),
			token(),
			pick(r, "Franks", "Britons", "Huns", "Aztecs", "Mayans", "Celts", "Goths", ""),
			pick(r, "700", "1000", "1001", "1400", "2000", "2001", "2100", "", "x", "1000.5"))
		if r.Intn(10) == 0 {
			p.WriteString("a,b,c,d,e\n")
		}
	}
	for i, n := 0, r.Intn(6); i < n; i++ { // likely 1v1 pairs, for Q2
		match := fmt.Sprintf("p%d", r.Intn(8))
		fmt.Fprintf(&p, "true,%s,Franks,%s\n", match, pick(r, "1000", "1001", "1400", "1400.0", "1050.7", "2000", ""))
		fmt.Fprintf(&p, "%s,%s,Huns,%s\n", pick(r, "false", "0", "true", ""), match, pick(r, "1501", "2000", "1999.99", "1000", ""))
	}
	return m.String(), p.String()
}

func TestCrossCheckRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	nonEmpty := map[string]int{}
	for i := 0; i < 3000; i++ {
		matches, players := randomDataset(r)
		res, err := Evaluate(strings.NewReader(matches), strings.NewReader(players))
		if err != nil {
			t.Fatal(err)
		}
		q1, q2, q3, q4 := naive(t, matches, players)
		want := map[string]string{"q1": q1, "q2": q2, "q3": q3, "q4": q4}
		if len(res.Answers) != len(want) {
			t.Fatalf("dataset %d: answers to %d queries, want %d", i, len(res.Answers), len(want))
		}
		for name, w := range want {
			got := string(res.Answers[name])
			if strings.Count(got, "\n") > 1 {
				nonEmpty[name]++
			}
			if got != w {
				t.Fatalf("dataset %d, %s:\n got %q\nwant %q\nmatches:\n%s\nplayers:\n%s", i, name, got, w, matches, players)
			}
		}
	}
	for _, q := range []string{"q1", "q2", "q3", "q4"} {
		if nonEmpty[q] < 300 { // the generator must exercise every query
			t.Errorf("%s had rows in only %d datasets", q, nonEmpty[q])
		}
	}
	t.Logf("datasets with rows: %v", nonEmpty)
}
