package exec_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// runBounded compiles q over the table t of text csv and executes it (the
// package tests' one way of running a query).
func runBounded(t *testing.T, csv, q string) *exec.Result {
	t.Helper()
	tab, err := exec.ReadCSV(strings.NewReader(csv), 0)
	if err != nil {
		t.Fatal(err)
	}
	root, err := sql.Compile(q, sql.Catalog{"t": tab.Columns})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	res, err := oracle.Execute(root, map[string]*exec.Table{"t": tab})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

var nines = strings.Repeat("9", value.MaxDigits)

// TestNumbersBounded: a number of more than value.MaxDigits digits reads
// as not a number (NULL, counted invalid, like any text that is not one),
// and a result past the bound (a product, a sum, a quotient, a percentage)
// is NULL; at the bound they are values.
func TestNumbersBounded(t *testing.T) {
	csv := "id,x\n1," + nines + "\n2,9" + nines + "\n3,0." + strings.Repeat("0", value.MaxDigits) + "1\n4,1\n5,-" + nines + "\n"
	res := runBounded(t, csv, "select id, x, x * 1, x * 1.0, x + 1, x / 1, x / 0.1, -x, x * x from t order by id")
	want := "id,x,x * 1,x * 1.0,x + 1,x / 1,x / 0.1,-x,x * x\n" +
		"1," + nines + "," + nines + ",,,,,-" + nines + ",\n" +
		"2,,,,,,,,\n3,,,,,,,,\n" +
		"4,1,1,1.0,2,1.0000,10.0000,-1,1\n" +
		"5,-" + nines + ",-" + nines + ",,-" + nines[1:] + "8,,," + nines + ",\n"
	if got := string(res.CSV()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var st exec.ColumnStats
	for _, s := range res.Stats {
		if s.Column == "x" {
			st = s
		}
	}
	if st.Invalid != 2 || st.Missing != 0 {
		t.Errorf("x's stats %+v, want 2 invalid (the two numbers past the bound)", st)
	}

	// A sum is bounded as a total: 38 nines + 1 - 1 is 38 nines whatever
	// order the rows come in, and 38 nines + 38 nines is NULL, as is the
	// average of it and PERCENT of it.
	sums := "g,x\na," + nines + "\na,1\na,-1\nb," + nines + "\nb," + nines + "\nc,10\nc,20\n"
	res = runBounded(t, sums, "select g, sum(x), avg(x), percent(sum(x), count(*)) as p from t group by g order by g")
	want = "g,sum(x),avg(x),p\n" +
		"a," + nines + ",,\n" + // the average has 38 digits before the point and 1 after; 100 × the sum / 3 40 digits
		"b,,,\n" +
		"c,30,15.0,1500.0000\n"
	if got := string(res.CSV()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRepeatedProductBounded: multiplying the widest number by itself
// again and again (the review's 55.7 CPU-seconds a row, with a 2,000-digit
// number) stops at the bound: every step's value has at most
// value.MaxDigits digits, and the steps past it are NULL, so no step
// works on wider numbers. Each prefix of the chain is its own query, so
// that every intermediate value is observed.
func TestRepeatedProductBounded(t *testing.T) {
	csv := "id,x,y\n1," + nines + ",1\n2,1.5,1\n3,2,1\n"
	expr := "x"
	for step := 1; step <= 60; step++ {
		expr = "(" + expr + " * x)"
		res := runBounded(t, csv, "select id, "+expr+" as p from t order by id")
		for _, row := range strings.Split(strings.TrimSuffix(string(res.CSV()), "\n"), "\n")[1:] {
			id, p, _ := strings.Cut(row, ",")
			digits := strings.Count(p, "") - 1 - strings.Count(p, ".") - strings.Count(p, "-")
			if digits > value.MaxDigits {
				t.Fatalf("step %d, row %s: %s has %d digits", step, id, p, digits)
			}
			if id == "1" && p != "" {
				t.Fatalf("step %d: %s × itself is %s, want NULL", step, nines, p)
			}
			// 1.5^n is 15^n at scale n: NULL once 15^n has more than
			// 38 digits (n = 33); 2^n fits all along.
			wide := len(new(big.Int).Exp(big.NewInt(15), big.NewInt(int64(step+1)), nil).String()) > value.MaxDigits
			if wantNull := id == "2" && wide; id != "1" && wantNull != (p == "") {
				t.Errorf("step %d, row %s: %q", step, id, p)
			}
		}
	}
	// A 2,000-digit input is not a number: the chain never starts.
	wide := "id,x,y\n1," + strings.Repeat("7", 2000) + ",1\n"
	if got := string(runBounded(t, wide, "select id, (x * x) * x as p from t").CSV()); got != "id,p\n1,\n" {
		t.Errorf("a 2,000-digit input: %q", got)
	}
}

// TestAvgOfDecimals: AVG is written as DuckDB writes its DOUBLE (the
// shortest text of the exact quotient rounded once, docs/sql.md
// "Numbers"), whatever the scale of the values: an AVG of 15-decimal
// values was written with 19 decimals. The wants are DuckDB's texts.
func TestAvgOfDecimals(t *testing.T) {
	csv := "g,x\n" +
		"a,0.123456789012345\na,0.200000000000000\n" + // DECIMAL(18, 15)
		"b,1\nb,2\nb,2\n" +
		"c,1.0\nc,0.0\nc,0.0\nc,1.0\n" + // a win rate: AVG(CASE WHEN .. THEN 1.0 ELSE 0.0 END)
		"d,-2.5\nd,-0.5\n"
	for _, c := range []struct{ query, want string }{
		{"select g, avg(x) as a from t group by g order by g",
			"g,a\na,0.1617283945061725\nb,1.6666666666666667\nc,0.5\nd,-1.5\n"},
		{"select avg(case when x > 0 then 1.0 else 0.0 end) as r from t", "r\n0.6363636363636364\n"},
		{"select avg(x) * 2 as twice from t where g = 'c'", "twice\n1.0\n"}, // the average is a number like any other
	} {
		if got := string(runBounded(t, csv, c.query).CSV()); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.query, got, c.want)
		}
	}
}
