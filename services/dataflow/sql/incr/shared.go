package incr

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Shared key tables: operators of one key on one task of a physical plan
// (a Plan.Tables entry: q1's DISTINCT, q2's aggregate and q3's and q4's
// semi-joins, all by a match's token) may keep their keys in one
// exec.KeyTable, each its own state per slot beside it, as sqlops' Task
// has them; what moves a batch of changes to several of them (sqlops'
// EpochTask) then looks each row's key up once for all of them, and
// gives each the slots with its rows (FoldSlots), where each would look
// it up again in a table of its own. A keyed operator over rows that
// only arrive shares one: a semi-join, an aggregate (and its HAVING), a
// DISTINCT. The table is not written in their state (AppendState): what
// shares it writes it, and restores it before them (a semi-join indexes
// its state by slot).

// NewOpIn returns the operator of the plan node n, whose inputs' changes
// Step takes; grows says of each input whether its rows only arrive
// (Grows), which decides the operator's form (an aggregate over rows
// that leave computes a touched group again from its rows). Of the nodes
// below n only their Output is read (a physical plan's operator has no
// inputs: give it nodes of the input's columns), but for a LIMIT's or a
// ROW_NUMBER's, whose nodes down to its Sort are part of the operator:
// its input is the Sort's input. The kinds are the logical plan's but
// the answer's (NewAnswer); a HAVING over an aggregate is a Filter
// (NewHavingIn is both as one). When the operator is one of a key that
// shares a table (Shares), it keeps its keys in keys (nil: a table of
// its own).
func NewOpIn(n *plan.Node, grows []bool, keys *exec.KeyTable) (*Op, error) {
	if n.Op == plan.Limit || n.Op == plan.RowNumber {
		if _, _, err := split(n); err != nil {
			return nil, err
		}
	}
	if err := checkJoin(n); err != nil {
		return nil, err
	}
	if want := len(opInputs(n)); len(grows) != want {
		return nil, fmt.Errorf("incr: %s operator of %d inputs, told of %d", n.Op, want, len(grows))
	}
	if !sharesKeys(n, grows) {
		keys = nil
	}
	o := newOp(n, grows, keys)
	if o == nil {
		return nil, fmt.Errorf("%w: the plan operator %q", ErrUnsupported, n.Op)
	}
	return &Op{op: o, cols: n.Output, shared: keys}, nil
}

// NewHavingIn returns the aggregate agg (over an input whose rows only
// arrive) with the HAVING having over it, as one operator: it remembers
// which groups' rows pass, and makes the row before of a touched group
// only when it did.
// It keeps the aggregate's keys in keys (nil: a table of its own).
func NewHavingIn(agg *plan.Node, having *plan.Expr, keys *exec.KeyTable) *Op {
	return &Op{op: newAgg(agg, having, keys), cols: agg.Output, shared: keys}
}

// sharesKeys reports whether the operator of n keeps its keys in a table
// it is given: a semi-join, an aggregate over rows that only arrive, a
// DISTINCT over them.
func sharesKeys(n *plan.Node, grows []bool) bool {
	switch n.Op {
	case plan.SemiJoin:
		return true
	case plan.Aggregate, plan.Distinct:
		return grows[0]
	}
	return false
}

// Shares is the shared table the operator keeps its keys in, nil when it
// keeps them in one of its own.
func (o *Op) Shares() *exec.KeyTable { return o.shared }

// KeyUse is how an operator keys one of its inputs in its table, when its
// key there is one column of the input's batch: the column, and what
// exec.KeyTable.Slots is to do with a row's key (Mode) and with a NULL
// (Null).
type KeyUse struct {
	Col        int
	Mode, Null exec.KeyMode
}

// KeyOf says how the operator keys input k in its shared table (Shares),
// when its key there is one column.
func (o *Op) KeyOf(k int) (KeyUse, bool) {
	if o.shared == nil {
		return KeyUse{}, false
	}
	switch x := o.op.(type) {
	case *semiOp:
		if k == 1 {
			return KeyUse{Col: 0, Mode: exec.AddKey, Null: exec.SkipKey}, true
		}
		if x.key != nil && x.key.Kind == plan.ColRef {
			return KeyUse{Col: x.key.Col, Mode: exec.AddKey, Null: exec.SkipKey}, true
		}
	case *aggOp:
		if len(x.n.Keys) == 1 && x.n.Keys[0].Kind == plan.ColRef {
			return KeyUse{Col: x.n.Keys[0].Col, Mode: exec.AddKey, Null: exec.AddKey}, true
		}
	case *distinctOp:
		if len(x.cols) == 1 {
			return KeyUse{Col: 0, Mode: exec.AddKey, Null: exec.AddKey}, true
		}
	}
	return KeyUse{}, false
}

// FoldSlots is Fold given slots, the slots of b's rows' keys in the
// shared table, looked up as KeyOf(k) says (nil: looked up here).
func (o *Op) FoldSlots(k int, b *exec.Batch, slots []int32) ([]*exec.Batch, error) {
	if slots == nil {
		return o.Fold(k, b)
	}
	if _, ok := o.KeyOf(k); !ok || !o.Folds(k) || len(slots) != b.N {
		return nil, fmt.Errorf("incr: slots of %d rows given to input %d of a %T of %d", len(slots), k, o.op, b.N)
	}
	switch x := o.op.(type) {
	case *semiOp:
		s := make([][][]int32, 2)
		s[k] = [][]int32{slots}
		return x.stepSlots(only(2, k, b), s)
	case *aggOp:
		return x.foldSlots(b, slots)
	case *distinctOp:
		return x.stepSlots(only(1, k, b), [][]int32{slots})
	}
	return o.Fold(k, b)
}
