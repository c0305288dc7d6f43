package exec_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

const sample = "id,x,y,flag,name,d\n" +
	"1,10,3,true,Bob,1:00:00\n" +
	"2,-2.5,0,FALSE,\"a,b\",\"1 day, 0:00:01\"\n" +
	"3,,2,,,bad\n" +
	"4,abc,1,yes,\xffz,\n" +
	"5,7,x\n" // malformed: three fields

func query(t *testing.T, q string) (string, *exec.Result) {
	t.Helper()
	res := runBounded(t, sample, q)
	return string(res.CSV()), res
}

// TestExpressions pins the evaluation of each form, NULLs included.
func TestExpressions(t *testing.T) {
	cases := []struct{ query, want string }{
		{"select id, x + y, x - y, x * y, x / y from t order by id",
			"id,x + y,x - y,x * y,x / y\n1,13,7,30,3.3333\n2,-2.5,-2.5,0.0,\n3,,,,\n4,,,,\n"},
		{"select id, -x as neg, case when x > 5 then 'big' when x < 0 then 'neg' end as c from t order by 1",
			"id,neg,c\n1,-10,big\n2,2.5,neg\n3,,\n4,,\n"},
		{"select id, flag and x > 0 as a, flag or x > 0 as o, not flag as n from t order by id",
			"id,a,o,n\n1,true,true,false\n2,false,false,true\n3,,,\n4,,,\n"},
		{"select id, name in ('Bob', 'zz') as a, name in ('Bob', null) as b, name <> 'Bob' as c, flag = true as d, 2 < x as e, not (x > 0) as f from t order by id",
			"id,a,b,c,d,e,f\n1,true,true,false,true,true,false\n2,false,,true,false,false,true\n3,false,,true,,,\n4,false,,true,,,\n"},
		{"select id, x in (10, 7.0) as i, x is null as n, name is null as nn from t order by id",
			"id,i,n,nn\n1,true,false,false\n2,false,false,false\n3,,true,false\n4,,true,false\n"},
		{"select id, duration_seconds(d) as s from t where duration_seconds(d) > 0 order by s desc",
			"id,s\n2,86401\n1,3600\n"},
		{"select name from t order by name", "name\n\nBob\n\"a,b\"\n\xffz\n"},
		// BETWEEN is x >= lo AND x <= hi: NULL when x or a bound is NULL
		// and the other side does not decide; NOT BETWEEN its negation.
		{"select id, x between -3 and 7 as b, x not between -3 and 7 as nb, y between 1 and null as bn, y not between 5 and null as nbn from t order by id",
			"id,b,nb,bn,nbn\n1,false,true,,true\n2,true,false,false,true\n3,,,,true\n4,,,,true\n"},
		{"select id from t where y between 1 and 2 order by id", "id\n3\n4\n"},
		// COALESCE: the first argument not NULL; NULLIF(a, b): NULL where
		// a = b (by value: 10.0 = 10), else a, NULLs of a or b included.
		{"select id, coalesce(x, y, 0) as c, coalesce(name, 'none') as n, coalesce(null, x) as cx, nullif(x, 10.0) as nx, nullif(y, x) as ny, nullif(x, null) as nn from t order by id",
			"id,c,n,cx,nx,ny,nn\n1,10,Bob,10,,3,10\n2,-2.5,\"a,b\",-2.5,-2.5,0,-2.5\n3,2,,,,2,\n4,1,\xffz,,,1,\n"},
		{"select coalesce(sum(x), 0) as s, nullif(count(*), 4) as c from t where y > 5", "s,c\n0,0\n"},
		// LIKE: % any characters, _ one (a byte not UTF-8 is one), \
		// escapes; ILIKE folds case; NULL in, NULL out.
		{"select id, name like 'B%' as a, name ilike 'b_B' as b, name not like '%,%' as c, name like '_z' as d, name like 'a\\,b' as e, name like '%o%b' as f, name like '' as g, starts_with(name, 'a,') as s from t order by id",
			"id,a,b,c,d,e,f,g,s\n1,true,true,true,false,false,true,false,false\n2,false,false,false,false,true,false,false,true\n3,false,false,true,false,false,false,true,false\n4,false,false,true,true,false,false,false,false\n"},
		{"select id from t where name like '%b' or name not ilike '%B%' order by id", "id\n1\n2\n3\n4\n"},
		{"select id, starts_with(null, name) as b, starts_with(name, '') as c from t order by id", "id,b,c\n1,,true\n2,,true\n3,,true\n4,,true\n"},
		// The string functions: characters of UTF-8 (a byte not UTF-8 is
		// one, kept as it is); NULL in, NULL out.
		{"select id, lower(name) as l, upper(name) as u, length(name) as n, name || '-' || name as c, replace(name, 'b', 'XY') as r, replace(name, '', 'q') as r0 from t order by id",
			"id,l,u,n,c,r,r0\n1,bob,BOB,3,Bob-Bob,BoXY,Bob\n2,\"a,b\",\"A,B\",3,\"a,b-a,b\",\"a,XY\",\"a,b\"\n3,,,0,-,,\n4,\xffz,\xffZ,2,\xffz-\xffz,\xffz,\xffz\n"},
		{"select id, substr(name, 2) as a, substr(name, 0, 2) as b, substr(name, -3, 5) as c, substr(name, 2, 1) as d, substr(name, 9) as e, substr(name, y) as f, trim('  a b ') as g, name || null as h from t order by id",
			"id,a,b,c,d,e,f,g,h\n1,ob,B,B,o,,b,a b,\n2,\",b\",a,a,\",\",,\"a,b\",a b,\n3,,,,,,,a b,\n4,z,\xff,\xff,z,,\xffz,a b,\n"},
		// abs keeps the scale; round is half away from zero, at digits
		// decimals (those it has when fewer); floor and ceil whole.
		{"select id, abs(x) as a, round(x) as r, round(x, 1) as r1, round(x * 1.25, 1) as r2, round(x * 7, -1) as rm, floor(x) as f, ceil(x) as c, floor(-x) as nf from t order by id",
			"id,a,r,r1,r2,rm,f,c,nf\n1,10,10,10,12.5,70,10,10,-10\n2,2.5,-3,-2.5,-3.1,-20,-3,-2,2\n3,,,,,,,,\n4,,,,,,,,\n"},
		{"select length('héé_x') as n, upper('héé') as u, substr('héé_x', 2, 2) as s from t where y = 3", "n,u,s\n5,HÉÉ,éé\n"},
		// GROUP BY a position or a SELECT alias groups by the item's
		// expression; ORDER BY a position sorts by that column.
		{"select case when y > 1 then 'hi' else 'lo' end as band, count(*) as n, sum(y) from t group by band order by 3 desc",
			"band,n,sum(y)\nhi,2,5\nlo,2,1\n"},
		{"select y > 1, count(*) from t group by 1 order by 1", "y > 1,count(*)\nfalse,2\ntrue,2\n"},
		{"select x from t where x * 1 = x order by x desc", "x\n10\n-2.5\n"},
		{"select x * 1 as x from t order by x", "x\n-2.5\n10\n\n\n"}, // NULLs last
		{"select count(*), count(x * 1), sum(x), min(x), max(x), avg(x), sum(case when flag then 1 else 0 end) from t",
			"count(*),count(x * 1),sum(x),min(x),max(x),avg(x),sum(case when flag then 1 else 0 end)\n4,2,7.5,-2.5,10,3.75,1\n"},
		{"select sum(x), count(*) from t where x > 100", "sum(x),count(*)\n,0\n"},
		{"select flag, count(*) as n from t group by flag having n < 2 and (flag or not flag) order by count(*) desc, flag",
			"flag,n\nfalse,1\ntrue,1\n"},
		{"select percent(y, 3) as p, y from t where y > 0 order by y", "p,y\n33.3333,1\n66.6667,2\n100.0000,3\n"},
		// Conditional aggregates (read without the CASE's column): a NULL
		// condition is not true, an ELSE constant stands for the other
		// rows, NULL THEN values are not counted; two share a condition.
		{"select count(case when flag then 1 end) as a, count(case when not flag then x end) as b, " +
			"sum(case when flag then x else 0.00 end) as c, sum(case when x > 100 then 1 else 0 end) as d, " +
			"max(case when not flag then x end) as e, min(case when y > 0 then name end) as f, " +
			"max(case when y > 0 then name else 'zz' end) as g, avg(case when flag then y else 1 end) as h, " +
			"min(case when x > 100 then y end) as i from t",
			"a,b,c,d,e,f,g,h,i\n1,1,10.00,0,-2.5,,\xffz,1.5,\n"},
		{"select flag, max(case when y > 1 then y end) as m, max(case when y > 1 then y * 1.0 end) as s from t group by flag order by flag",
			"flag,m,s\n,2,2.0\nFALSE,,\ntrue,3,3.0\nyes,,\n"},
	}
	for _, c := range cases {
		if got, _ := query(t, c.query); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.query, got, c.want)
		}
	}
}

// TestStats counts, per column read as a kind, the empty values and those
// that did not read as it; and the malformed records.
func TestStats(t *testing.T) {
	_, res := query(t, "select id from t where x > 0 or flag or duration_seconds(d) > 0")
	got := map[string][2]int64{}
	for _, s := range res.Stats {
		got[s.Column+" "+plan.Column{Type: s.Type, Read: s.Read}.Kind()] = [2]int64{s.Missing, s.Invalid}
	}
	want := map[string][2]int64{"x number": {1, 1}, "flag bool": {1, 1}, "d duration": {1, 1}}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: missing, invalid = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	tab, _ := exec.ReadCSV(strings.NewReader(sample), 0)
	if tab.Rows != 5 || tab.Malformed != 1 {
		t.Errorf("rows %d malformed %d, want 5 and 1", tab.Rows, tab.Malformed)
	}
	// A record longer than the bound is malformed too (the second is 38
	// bytes with its "\n", the others at most 24).
	tab, _ = exec.ReadCSV(strings.NewReader(sample), 30)
	if tab.Rows != 5 || tab.Malformed != 2 {
		t.Errorf("with a bound: rows %d malformed %d, want 5 and 2", tab.Rows, tab.Malformed)
	}
}

// TestEqualNumbersWrittenDifferently: of equal numbers written with
// different scales, what a query writes is the rule's choice, not the
// first row's (docs/sql.md "Numbers"): a DISTINCT row and a group key in
// the normal form, MIN and MAX the larger scale, and the sort puts the
// smaller scale first, so that LIMIT keeps the same row; in both orders
// of the rows.
func TestEqualNumbersWrittenDifferently(t *testing.T) {
	rows := []string{"a,1500.0\n", "b,1500\n", "a,1500.00\n", "c,1007.0\n", "c,1007\n"}
	cases := []struct{ query, want string }{
		{"select distinct x from t where x > 0", "x\n1007\n1500\n"},
		{"select distinct k, x from t where x > 0", "k,x\na,1500\nb,1500\nc,1007\n"},
		{"select x, count(*) as n from t where x > 0 group by x", "x,n\n1007,2\n1500,3\n"},
		{"select k, min(x), max(x) from t where x > 0 group by k", "k,min(x),max(x)\na,1500.00,1500.00\nb,1500,1500\nc,1007.0,1007.0\n"},
		{"select x from t where x > 0 order by x", "x\n1007\n1007.0\n1500\n1500.0\n1500.00\n"},
		{"select x from t where x > 0 order by x desc limit 2", "x\n1500\n1500.0\n"},
		{"select k, x from t where x > 0 order by x, k limit 4", "k,x\nc,1007\nc,1007.0\na,1500.0\na,1500.00\n"},
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 1, 3, 0}} {
		csv := "k,x\n"
		for _, i := range order {
			csv += rows[i]
		}
		for _, c := range cases {
			if got := string(runBounded(t, csv, c.query).CSV()); got != c.want {
				t.Errorf("rows in order %v: %s:\n got %q\nwant %q", order, c.query, got, c.want)
			}
		}
	}
}
