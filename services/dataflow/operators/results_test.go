package operators

import (
	"fmt"
	"testing"
)

func TestResults(t *testing.T) {
	cases := []struct {
		name           string
		inputs         []input
		q1, q2, q3, q4 string
	}{
		{
			name: "empty results are the header only",
			q1:   "token\n", q2: "token\n", q3: "civ,wins,played,win_pct\n", q4: "rank,civ,players\n",
		},
		{
			name: "empty batches change nothing",
			inputs: []input{
				{Q1Tokens, tokenBatch()}, {Q2Tokens, tokenBatch()}, {Q3Civs, civBatch()}, {Q4Civs, civBatch()},
			},
			q1: "token\n", q2: "token\n", q3: "civ,wins,played,win_pct\n", q4: "rank,civ,players\n",
		},
		{
			name: "q1 deduplicated and sorted by byte value",
			inputs: []input{
				{Q1Tokens, tokenBatch("b", "a", "a9")},
				{Q1Tokens, tokenBatch("a10", "b", "B", "a")},
			},
			q1: "token\nB\na\na10\na9\nb\n", q2: "token\n", q3: "civ,wins,played,win_pct\n", q4: "rank,civ,players\n",
		},
		{
			name: "q2 kept apart from q1",
			inputs: []input{
				{Q2Tokens, tokenBatch("z", "y")},
				{Q1Tokens, tokenBatch("x")},
				{Q2Tokens, tokenBatch("y")},
			},
			q1: "token\nx\n", q2: "token\ny\nz\n", q3: "civ,wins,played,win_pct\n", q4: "rank,civ,players\n",
		},
		{
			name: "tokens needing quotes",
			inputs: []input{
				{Q1Tokens, tokenBatch("a,b", `say "hi"`, "plain")},
			},
			q1: "token\n\"a,b\"\nplain\n\"say \"\"hi\"\"\"\n", q2: "token\n", q3: "civ,wins,played,win_pct\n", q4: "rank,civ,players\n",
		},
		{
			name: "q3 sums partials, sorted by civ, four decimals",
			inputs: []input{
				{Q3Civs, civBatch(cr{"Britons", 1, 2}, cr{"Aztecs", 1, 3})},
				{Q3Civs, civBatch(cr{"Britons", 1, 1})},
				{Q3Civs, civBatch(cr{"Goths", 5, 5}, cr{"Franks", 0, 5}, cr{"Celts", 1, 8})},
			},
			q1: "token\n", q2: "token\n",
			q3: "civ,wins,played,win_pct\n" +
				"Aztecs,1,3,33.3333\n" +
				"Britons,2,3,66.6667\n" +
				"Celts,1,8,12.5000\n" +
				"Franks,0,5,0.0000\n" +
				"Goths,5,5,100.0000\n",
			q4: "rank,civ,players\n",
		},
		{
			// 100×1/128 = 0.78125 and 100×3/128 = 2.34375 are exact in binary:
			// %.4f rounds them half to even.
			name: "q3 win_pct rounding of exact halves",
			inputs: []input{
				{Q3Civs, civBatch(cr{"a", 1, 128}, cr{"b", 3, 128}, cr{"c", 2, 7})},
			},
			q1: "token\n", q2: "token\n",
			q3: "civ,wins,played,win_pct\na,1,128,0.7812\nb,3,128,2.3438\nc,2,7,28.5714\n",
			q4: "rank,civ,players\n",
		},
		{
			name: "q3 large counts",
			inputs: []input{
				{Q3Civs, civBatch(cr{"Huns", 1234567, 3000000})},
			},
			q1: "token\n", q2: "token\n",
			q3: "civ,wins,played,win_pct\nHuns,1234567,3000000,41.1522\n",
			q4: "rank,civ,players\n",
		},
		{
			name: "a civ containing a comma or a quote is quoted",
			inputs: []input{
				{Q3Civs, civBatch(cr{"Civ, The", 1, 2}, cr{`Say "hi"`, 1, 4})},
				{Q4Civs, civBatch(cr{"Civ, The", 0, 3}, cr{"Aztecs", 0, 2})},
			},
			q1: "token\n", q2: "token\n",
			q3: "civ,wins,played,win_pct\n\"Civ, The\",1,2,50.0000\n\"Say \"\"hi\"\"\",1,4,25.0000\n",
			q4: "rank,civ,players\n1,\"Civ, The\",3\n2,Aztecs,2\n",
		},
		{
			name: "q4 ranks the top five, ties by name",
			inputs: []input{
				{Q4Civs, civBatch(cr{"Franks", 0, 5}, cr{"Aztecs", 0, 10}, cr{"Celts", 0, 7}, cr{"Goths", 0, 12})},
				{Q4Civs, civBatch(cr{"Britons", 0, 7}, cr{"Huns", 0, 1}, cr{"Incas", 0, 5}, cr{"Dravidians", 0, 4})},
				{Q4Civs, civBatch(cr{"Dravidians", 0, 1})},
			},
			q1: "token\n", q2: "token\n", q3: "civ,wins,played,win_pct\n",
			q4: "rank,civ,players\n1,Goths,12\n2,Aztecs,10\n3,Britons,7\n4,Celts,7\n5,Dravidians,5\n",
		},
		{
			name: "q4 with fewer than five civs",
			inputs: []input{
				{Q4Civs, civBatch(cr{"Celts", 0, 1}, cr{"Aztecs", 0, 3})},
			},
			q1: "token\n", q2: "token\n", q3: "civ,wins,played,win_pct\n",
			q4: "rank,civ,players\n1,Aztecs,3\n2,Celts,1\n",
		},
		{
			name: "every file at once",
			inputs: []input{
				{Q4Civs, civBatch(cr{"Celts", 0, 1})},
				{Q1Tokens, tokenBatch("t1")},
				{Q3Civs, civBatch(cr{"Aztecs", 1, 2})},
				{Q2Tokens, tokenBatch("t2")},
			},
			q1: "token\nt1\n", q2: "token\nt2\n", q3: "civ,wins,played,win_pct\nAztecs,1,2,50.0000\n", q4: "rank,civ,players\n1,Celts,1\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewResults()
			out := &fakeEmitter{}
			apply(t, r, out, c.inputs...)
			sameCalls(t, "emitted before Finish", out.take(), nil)
			if err := r.Finish(out); err != nil {
				t.Fatal(err)
			}
			sameCalls(t, "records", out.take(), []string{
				fmt.Sprintf("record result/q1.csv %q", c.q1),
				fmt.Sprintf("record result/q2.csv %q", c.q2),
				fmt.Sprintf("record result/q3.csv %q", c.q3),
				fmt.Sprintf("record result/q4.csv %q", c.q4),
			})
		})
	}
}

// TestQ3WinPctMatchesContract checks win_pct against the contract's formula
// over a range of counts.
func TestQ3WinPctMatchesContract(t *testing.T) {
	for played := int64(1); played <= 200; played++ {
		for wins := int64(0); wins <= played; wins++ {
			got := string(FormatQ3(map[string]*civCount{"x": {wins: wins, count: played}}))
			want := fmt.Sprintf("civ,wins,played,win_pct\nx,%d,%d,%.4f\n", wins, played, float64(100*wins)/float64(played))
			if got != want {
				t.Fatalf("wins=%d played=%d: got %q, want %q", wins, played, got, want)
			}
		}
	}
}
