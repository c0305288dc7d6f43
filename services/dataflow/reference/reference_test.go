package reference

import (
	"strings"
	"testing"
)

// Headers with the required columns only, in the order of docs/queries.md.
const (
	mh = "token,ladder,mirror,average_rating,map,server,duration\n"
	ph = "match,rating,civ,winner\n"

	// Empty answers.
	q1Empty = "token\n"
	q2Empty = "token\n"
	q3Empty = "civ,wins,played,win_pct\n"
	q4Empty = "rank,civ,players\n"
)

type evalCase struct {
	name             string
	matches, players string
	q1, q2, q3, q4   string
	report           Report
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Evaluate(strings.NewReader(c.matches), strings.NewReader(c.players))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			want := map[string]string{"q1": c.q1, "q2": c.q2, "q3": c.q3, "q4": c.q4}
			if len(res.Answers) != len(want) {
				t.Errorf("answers to %d queries, want %d", len(res.Answers), len(want))
			}
			for name, w := range want {
				if got := string(res.Answers[name]); got != w {
					t.Errorf("%s:\n got %q\nwant %q", name, got, w)
				}
			}
			if res.Report != c.report {
				t.Errorf("report: got %+v, want %+v", res.Report, c.report)
			}
		})
	}
}

func rep(mRows, mBad, pRows, pBad int64) Report {
	return Report{Matches: FileReport{Rows: mRows, Malformed: mBad}, Players: FileReport{Rows: pRows, Malformed: pBad}}
}

func TestEmpty(t *testing.T) {
	runCases(t, []evalCase{
		{
			name:    "headers only",
			matches: mh, players: ph,
			q1: q1Empty, q2: q2Empty, q3: q3Empty, q4: q4Empty,
		},
		{
			name:    "headers without final newline",
			matches: strings.TrimSuffix(mh, "\n"), players: strings.TrimSuffix(ph, "\n"),
			q1: q1Empty, q2: q2Empty, q3: q3Empty, q4: q4Empty,
		},
		{
			name: "rows but nothing qualifies",
			matches: mh +
				"a,RM_1v1,true,1500,arena,westeurope,0:30:00\n" +
				"b,RM_TEAM,false,2500,arabia,eastus,2:00:00\n",
			players: ph +
				"a,1200,Franks,true\n" +
				"a,1100,Britons,false\n" +
				"b,2500,Huns,true\n",
			q1: q1Empty, q2: q2Empty, q3: q3Empty, q4: q4Empty,
			report: rep(2, 0, 3, 0),
		},
	})
}

func TestQ1(t *testing.T) {
	runCases(t, []evalCase{{
		name: "boundaries",
		matches: mh +
			"a,x,,2000,m,eastus,3:00:00\n" + // average exactly 2000
			"b,x,,2000.0001,m,eastus,2:00:01\n" +
			"c,x,,2001,m,eastus,2:00:00\n" + // exactly 7200 s
			"d,x,,2001,m,koreacentral,\"1 day, 0:00:00\"\n" +
			"e,x,,2001,m,westeurope,5:00:00\n" +
			"f,x,,2001,m,southeastasia,\"2 days, 0:00:00\"\n" +
			"g,x,,2001,m,eastus,02:00:01\n" +
			"h,x,,2001,m,eastus,\"0 days, 2:00:00\"\n" +
			"i,x,,2001,m,eastus,\"0 day, 2:00:01\"\n" +
			"j,x,,2001.5,m,EastUS,3:00:00\n" + // server is case-sensitive
			"k,x,,abc,m,eastus,3:00:00\n" +
			"l,x,,2001,m,eastus,3:00\n" +
			"m,x,,2001,m,eastus,\"99999999999999999999999999 days, 0:00:00\"\n" +
			"n,x,,2001,m,eastus,1:99:99\n" + // no range check: 9639 s
			"o,x,,-2001,m,eastus,3:00:00\n" +
			"p,x,,+2001,m,eastus,3:00:00\n" +
			"q,x,,2001.,m,eastus,3:00:00\n" +
			"\"r\",x,,\"2001\",m,\"eastus\",\"3:00:00\"\n" +
			"s,x,,2001,m,eastus,123:00:00\n" +
			"t,x,,2001,m,eastus, 3:00:00\n" +
			"u,x,,2001 ,m,eastus,3:00:00\n" +
			"v,x,,2001,m,eastus,\"1 Day, 0:00:00\"\n" +
			"w,x,,2001,m,eastus,\"1 days,0:00:00\"\n" +
			"x,x,,1e4,m,eastus,3:00:00\n" +
			"b,x,,2500,m,eastus,9:00:00\n" + // duplicate token, both rows qualify
			"y,x,,2500,m,eastus,9:00:00\n" +
			"y,x,,1500,m,eastus,9:00:00\n" + // duplicate token, one row qualifies
			"z,x,,1500,m,eastus,9:00:00\n" +
			"Z,x,,02001,m,eastus,9:00:00\n" +
			"\u00e9,x,,2001,m,eastus,9:00:00\n",
		players: ph,
		q1:      "token\nZ\nb\nd\nf\ng\ni\nm\nn\nr\ny\n\u00e9\n",
		q2:      q2Empty, q3: q3Empty, q4: q4Empty,
		report: rep(30, 0, 0, 0),
	}})
}

func TestQ2(t *testing.T) {
	runCases(t, []evalCase{{
		name:    "boundaries",
		matches: mh,
		players: ph +
			"m01,1400,a,true\nm01,2000,b,false\n" + // 10×1400 = 7×2000: qualifies
			"m02,1050.7,a,true\nm02,1501,b,false\n" + // 10507 = 10507: qualifies
			"m03,1400,a,true\nm03,1999.99,b,false\n" + // 14000 > 13999.93
			"m04,1000,a,true\nm04,5000,b,false\n" + // winner exactly 1000
			"m05,1000.01,a,true\nm05,5000,b,false\n" +
			"m06,1100,a,true\nm06,2000,b,false\nm06,2000,c,false\n" + // three rows
			"m07,1100,a,true\nm07,,b,false\n" + // missing rating
			"m08,1100,a,true\nm08,2000,b,true\n" + // two winners
			"m09,1100,a,\nm09,2000,b,false\n" + // missing winner
			"m10,1100,a,true\nm10,2000,b,false\nm10,,,\n" + // a third row with nothing in it
			"m11,2000,a,false\nm11,1100,b,true\n" + // loser first
			"m12,2000,a,true\nm12,1100,b,false\n" + // winner stronger
			"m13,1100,a,true\n" + // one row
			"m14,1100,a,True\nm14,2000,b,FALSE\n" +
			"m15,1100,a,1\nm15,2000,b,0\n" +
			"m16,1100,a,yes\nm16,2000,b,no\n" +
			"m17,1100,a,true\nm17,1.5e3,b,false\n" +
			"m18,01100,a,true\nm18,2000,b,false\n" +
			"m19,1100,a,true\nm19,-2000,b,false\n" +
			"m20,1100,a,true\nm21,2000,b,false\n" + // split over two matches
			"m22,1100,a,false\nm22,2000,b,false\n" + // two losers
			"M01,1100,a,true\nM01,2000,b,false\n" +
			",1100,a,true\n,2000,b,false\n" + // the empty match is a key like any other
			"m23,1100,a,true\nm23,2000,b,false\nm23,1100,a,true\nm23,2000,b,false\n", // duplicated pair
		q1:     q1Empty,
		q2:     "token\n\nM01\nm01\nm02\nm05\nm11\nm14\nm15\nm18\n",
		q3:     q3Empty,
		q4:     q4Empty,
		report: rep(0, 0, 51, 0),
	}})
}

func TestQ3(t *testing.T) {
	runCases(t, []evalCase{{
		name: "qualifying matches, mirror, empty civ, missing winner",
		matches: mh +
			"A,RM_1v1,false,,arena,,\n" +
			"B,RM_1v1,true,,arena,,\n" + // mirror
			"C,RM_1v1,,,arena,,\n" + // mirror missing
			"D,RM_1v1,FALSE,,arena,,\n" +
			"E,RM_1v1,0,,Arena,,\n" + // map is case-sensitive
			"F,RM_TEAM,false,,arena,,\n" +
			"G,RM_1v1,false,,arena,,\n" +
			"G,RM_1v1,false,,arena,,\n" + // duplicate: G counts once
			"G,RM_1v1,true,,arena,,\n" +
			"H,RM_1v1,true,,arena,,\n" +
			"H,RM_1v1,0,,arena,,\n", // a duplicate that qualifies
		players: ph +
			"A,,Franks,true\n" +
			"A,,Britons,false\n" +
			"A,,,true\n" + // empty civ
			"A,,Mayans,\n" + // missing winner
			"A,,Mayans,maybe\n" +
			"B,,Franks,true\n" +
			"C,,Franks,false\n" +
			"D,,Franks,false\n" +
			"D,,Britons,TRUE\n" +
			"D,,Aztecs,0\n" +
			"E,,Franks,true\n" +
			"F,,Franks,true\n" +
			"G,,Franks,true\n" +
			"G,,Britons,false\n" +
			"G,,Mayans,1\n" +
			"H,,Huns,true\n" +
			"H,,Huns,false\n" +
			"H,,Huns,false\n" +
			"X,,Franks,true\n",
		q1: q1Empty,
		q2: q2Empty,
		q3: "civ,wins,played,win_pct\n" +
			"Aztecs,0,1,0.0000\n" +
			"Britons,1,3,33.3333\n" +
			"Franks,2,3,66.6667\n" +
			"Huns,1,3,33.3333\n" +
			"Mayans,1,1,100.0000\n",
		q4:     q4Empty,
		report: rep(11, 0, 19, 0),
	}})
}
