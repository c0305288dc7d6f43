package main

import (
	"database/sql/driver"
	"fmt"
	"math/big"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// exactCmp is the SQL function wl_cmp(ka BIGINT, a VARCHAR, kb BIGINT,
// b VARCHAR) INTEGER: the sign of ka×a − kb×b, where a and b are numbers
// in the contract's form (-?[0-9]+(\.[0-9]+)?) of any length, compared
// exactly. NULL in, NULL out. The queries call it only for numbers too wide
// for their DECIMAL(38,18).
type exactCmp struct{}

// Config declares the signature.
func (exactCmp) Config() duckdb.ScalarFuncConfig {
	bigint, err1 := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	varchar, err2 := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	integer, err3 := duckdb.NewTypeInfo(duckdb.TYPE_INTEGER)
	if err1 != nil || err2 != nil || err3 != nil {
		panic("duckdb.NewTypeInfo of a primitive type failed") // cannot happen
	}
	return duckdb.ScalarFuncConfig{
		InputTypeInfos: []duckdb.TypeInfo{bigint, varchar, bigint, varchar},
		ResultTypeInfo: integer,
	}
}

// Executor computes one row.
func (exactCmp) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		ka, okA := v[0].(int64)
		a, okAText := v[1].(string)
		kb, okB := v[2].(int64)
		b, okBText := v[3].(string)
		if !okA || !okAText || !okB || !okBText {
			return nil, fmt.Errorf("wl_cmp: unexpected arguments %T %T %T %T", v[0], v[1], v[2], v[3])
		}
		c, err := compareScaled(ka, a, kb, b)
		return int32(c), err
	}}
}

// compareScaled is the sign of ka×a − kb×b for decimal texts a and b:
// both are brought to the larger number of fractional digits and compared
// as integers.
func compareScaled(ka int64, a string, kb int64, b string) (int, error) {
	x, xScale, err := decimalInt(a)
	if err != nil {
		return 0, err
	}
	y, yScale, err := decimalInt(b)
	if err != nil {
		return 0, err
	}
	for ; xScale < yScale; xScale++ {
		x.Mul(x, big.NewInt(10))
	}
	for ; yScale < xScale; yScale++ {
		y.Mul(y, big.NewInt(10))
	}
	x.Mul(x, big.NewInt(ka))
	y.Mul(y, big.NewInt(kb))
	return x.Cmp(y), nil
}

// decimalInt reads a number of the form -?[0-9]+(\.[0-9]+)? as the integer
// of its digits and the count of its fractional digits (its scale), base
// 10 whatever its leading digits.
func decimalInt(s string) (*big.Int, int, error) {
	digits := strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(digits, ".")
	n, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok || whole == "" || strings.ContainsAny(whole+frac, "+-_") {
		return nil, 0, fmt.Errorf("wl_cmp: %q is not a number", s)
	}
	if len(digits) < len(s) {
		n.Neg(n)
	}
	return n, len(frac), nil
}
