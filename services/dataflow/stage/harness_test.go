package stage_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// The tests' operator and plans. The runtime runs what Config.Plans makes
// of a job's plan; here a plan is the name of a spec of testPlans, and
// the operators read their batches as text, rows "key value\n", not as
// the ColumnBatches a SQL plan's operators read: the runtime never reads
// a batch itself.

// The tests' instances: shard-0 of the default topology, which reads the
// stream sumRows from the two shards (as a plan's shuffle from shard to
// shard) and writes sumOut to the gateway.
const (
	sumRows = "c0-rows"
	sumOut  = "c1-sums"
)

// testPlans are the specs of the tests' plans, by plan.
var testPlans = map[string]stage.JobSpec{
	"sum": {
		Wiring: stage.Wiring{
			Inputs:  []stage.Edge{{Stream: sumRows, Stage: "shard", Replicas: 2}},
			Outputs: []stage.Edge{{Stream: sumOut, Stage: "gateway", Replicas: 1}},
		},
		New: func() stage.Operator { return &sumOp{sums: map[string]int{}} },
	},
	// "tally" is "sum" writing a record of each batch it applies, as a
	// standing job's gateway writes a version each epoch.
	"tally": {
		Wiring: stage.Wiring{
			Inputs:  []stage.Edge{{Stream: sumRows, Stage: "shard", Replicas: 2}},
			Outputs: []stage.Edge{{Stream: sumOut, Stage: "gateway", Replicas: 1}},
		},
		New: func() stage.Operator { return &tallyOp{sumOp: sumOp{sums: map[string]int{}}} },
	},
}

// tallyOp is a sumOp that records, after each batch, how many batches it
// has applied: "tally/N" holds the batch's rows.
type tallyOp struct {
	sumOp
	batches int
}

func (o *tallyOp) Apply(k int, b []byte, out stage.Emitter) (int, error) {
	n, err := o.sumOp.Apply(k, b, out)
	if err == nil {
		o.batches++
		out.Record(fmt.Sprintf("tally/%d", o.batches), b)
	}
	return n, err
}

// plans is Config.Plans of testPlans.
func plans(_ string, plan []byte) (stage.JobSpec, error) {
	spec, ok := testPlans[string(plan)]
	if !ok {
		return stage.JobSpec{}, fmt.Errorf("no test plan %q", plan)
	}
	return spec, nil
}

// rowsOf is a batch of "key value" rows as it travels.
func rowsOf(rows ...string) []byte {
	var b []byte
	for _, r := range rows {
		b = append(b, r...)
		b = append(b, '\n')
	}
	return b
}

// sumOp sums the values of each key of its input; at Finish it emits the
// sums with a value above 1, "key sum" rows in key order, to the gateway
// (as a q2 of the hand-written graph emitted a match with two ratings
// over its bound). A row that does not read is the batch's refusal.
type sumOp struct{ sums map[string]int }

func (o *sumOp) Apply(_ int, b []byte, _ stage.Emitter) (int, error) {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	add := map[string]int{}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, " ")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return 0, fmt.Errorf("%w: row %q", batch.ErrBadBatch, l)
		}
		add[k] += n
	}
	for k, n := range add {
		o.sums[k] += n
	}
	return len(lines), nil
}

func (o *sumOp) Finish(out stage.Emitter) error {
	var rows []string
	for _, k := range slices.Sorted(maps.Keys(o.sums)) {
		if o.sums[k] > 1 {
			rows = append(rows, fmt.Sprintf("%s %d", k, o.sums[k]))
		}
	}
	if len(rows) > 0 {
		out.Encoded(sumOut, 0, rowsOf(rows...), len(rows))
	}
	return nil
}

func (o *sumOp) AppendSnapshot(dst []byte) ([]byte, error) {
	for _, k := range slices.Sorted(maps.Keys(o.sums)) {
		dst = fmt.Appendf(dst, "%s %d\n", k, o.sums[k])
	}
	return dst, nil
}

func (o *sumOp) Restore(state []byte) error {
	if len(state) == 0 {
		return nil
	}
	if !bytes.HasSuffix(state, []byte("\n")) {
		return fmt.Errorf("a snapshot of %d bytes does not end a row", len(state))
	}
	_, err := o.Apply(0, state, stage.Discard)
	return err
}
