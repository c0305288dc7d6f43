package stage

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// calls records what the chained test operators were asked, in order.
type calls []string

func (c *calls) add(format string, args ...any) { *c = append(*c, fmt.Sprintf(format, args...)) }

// tokens is a token batch.
func tokens(ts ...string) *wololov1.RowBatch {
	var b batch.TokenBuilder
	for _, t := range ts {
		b.Add([]byte(t))
	}
	return b.Build()
}

// tokenOp copies every token it reads to its outputs; at Finish it emits
// "<name>-done" on them. It ends a stream early when it is a StreamEnder.
type tokenOp struct {
	name string
	outs []string
	log  *calls
}

func (o *tokenOp) Apply(stream string, rows *wololov1.RowBatch, out Emitter) error {
	var got []string
	err := batch.EachToken(rows.GetTokens(), func(t []byte) {
		got = append(got, string(t))
		for _, s := range o.outs {
			out.Token(s, t)
		}
	})
	o.log.add("%s apply %s %v", o.name, stream, got)
	return err
}

func (o *tokenOp) Finish(out Emitter) error {
	o.log.add("%s finish", o.name)
	for _, s := range o.outs {
		out.Token(s, []byte(o.name+"-done"))
	}
	return nil
}

type endingOp struct{ tokenOp }

func (o *endingOp) EndStream(stream string, _ Emitter) error {
	o.log.add("%s end %s", o.name, stream)
	return nil
}

// recorder is the Emitter outside the task.
type recorder struct{ rows []string }

func (r *recorder) Match(s string, m *batch.Match)     { r.rows = append(r.rows, s+":"+string(m.Token)) }
func (r *recorder) Player(s string, p *batch.Player)   { r.rows = append(r.rows, s+":"+string(p.Match)) }
func (r *recorder) Token(s string, t []byte)           { r.rows = append(r.rows, s+":"+string(t)) }
func (r *recorder) Civ(s string, c string, _, _ int64) { r.rows = append(r.rows, s+":"+c) }
func (r *recorder) Record(k string, _ []byte)          { r.rows = append(r.rows, "record:"+k) }
func (r *recorder) Batch(s string, to int, _ *wololov1.RowBatch) {
	r.rows = append(r.rows, fmt.Sprintf("%s:batch to %d", s, to))
}
func (r *recorder) End(s string) { r.rows = append(r.rows, s+":end") }

// TestChainCallsAndEnds: rows on an internal stream reach their reader as
// soon as the writer returns, rows on the others leave the task, and an
// operator finishes, ending its internal outputs, as soon as all of its
// inputs have ended, before the task's other inputs do.
func TestChainCallsAndEnds(t *testing.T) {
	var log calls
	spec, err := Chain([]Link{
		{Stage: "up", Spec: Spec{Inputs: []string{"in"}, Outputs: []string{"mid", "side"}, New: func() Operator {
			return &tokenOp{name: "up", outs: []string{"mid", "side"}, log: &log}
		}, Stateless: true}},
		{Stage: "down", Spec: Spec{Inputs: []string{"mid", "in2"}, Outputs: []string{"out"}, New: func() Operator {
			return &endingOp{tokenOp{name: "down", outs: []string{"out"}, log: &log}}
		}}},
	}, []string{"mid"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec.Inputs, []string{"in", "in2"}) || !reflect.DeepEqual(spec.Outputs, []string{"side", "out"}) || spec.Stateless {
		t.Fatalf("spec: inputs %v, outputs %v, stateless %v", spec.Inputs, spec.Outputs, spec.Stateless)
	}
	op := spec.New()
	ender := op.(StreamEnder)
	out := &recorder{}
	steps := []func() error{
		func() error { return op.Apply("in", tokens("a", "b"), out) },
		func() error { return op.Apply("in2", tokens("x"), out) },
		func() error { return ender.EndStream("in", out) },
		func() error { return ender.EndStream("in2", out) },
		func() error { return op.Finish(out) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	wantLog := calls{
		"up apply in [a b]", "down apply mid [a b]",
		"down apply in2 [x]",
		"up finish", "down apply mid [up-done]", "down end mid",
		"down end in2", "down finish",
	}
	if !reflect.DeepEqual(log, wantLog) {
		t.Errorf("calls:\n got %q\nwant %q", log, wantLog)
	}
	wantOut := []string{"side:a", "side:b", "out:a", "out:b", "out:x", "side:up-done", "out:up-done", "out:down-done"}
	if !reflect.DeepEqual(out.rows, wantOut) {
		t.Errorf("rows leaving the task:\n got %q\nwant %q", out.rows, wantOut)
	}
}

// rowOp is a tokenOp that also takes its rows one at a time.
type rowOp struct{ endingOp }

func (o *rowOp) Rows(out Emitter) RowFuncs {
	return RowFuncs{Token: func(stream string, t []byte) {
		o.log.add("%s row %s %s", o.name, stream, t)
		for _, s := range o.outs {
			out.Token(s, t)
		}
	}}
}

// TestChainHandsRowsToARowSink: a reader that takes rows one at a time gets
// each as it is emitted, and the rest behaves as with batches.
func TestChainHandsRowsToARowSink(t *testing.T) {
	var log calls
	spec, err := Chain([]Link{
		{Stage: "up", Spec: Spec{Inputs: []string{"in"}, Outputs: []string{"mid"}, New: func() Operator {
			return &tokenOp{name: "up", outs: []string{"mid"}, log: &log}
		}, Stateless: true}},
		{Stage: "down", Spec: Spec{Inputs: []string{"mid"}, Outputs: []string{"out"}, New: func() Operator {
			return &rowOp{endingOp{tokenOp{name: "down", outs: []string{"out"}, log: &log}}}
		}}},
	}, []string{"mid"})
	if err != nil {
		t.Fatal(err)
	}
	op := spec.New()
	out := &recorder{}
	if err := op.Apply("in", tokens("a", "b"), out); err != nil {
		t.Fatal(err)
	}
	if err := op.(StreamEnder).EndStream("in", out); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	wantLog := calls{"down row mid a", "down row mid b", "up apply in [a b]", "up finish", "down row mid up-done", "down end mid", "down finish"}
	if !reflect.DeepEqual(log, wantLog) {
		t.Errorf("calls:\n got %q\nwant %q", log, wantLog)
	}
	if want := []string{"out:a", "out:b", "out:up-done", "out:down-done"}; !reflect.DeepEqual(out.rows, want) {
		t.Errorf("rows leaving the task: %q, want %q", out.rows, want)
	}
	// A row of a kind the reader does not take is the chain's error.
	c := op.(*chain)
	c.emit[0].Civ("mid", "Franks", 1, 1)
	if c.err == nil || !strings.Contains(c.err.Error(), "does not take") {
		t.Errorf("a civ row to a token reader: %v", c.err)
	}
}

func TestChainRefusesWhatCannotRun(t *testing.T) {
	op := func(ins, outs []string) Spec {
		return Spec{Inputs: ins, Outputs: outs, New: func() Operator { return &tokenOp{} }}
	}
	cases := []struct {
		name     string
		links    []Link
		internal []string
		want     string
	}{
		{"nothing", nil, nil, "no operators"},
		{"a stream read twice", []Link{{"a", op([]string{"in"}, nil)}, {"b", op([]string{"in"}, nil)}}, nil, "read twice"},
		{"an internal stream nobody writes", []Link{{"a", op([]string{"in"}, nil)}, {"b", op([]string{"mid"}, nil)}}, []string{"mid"}, "no producer"},
		{"downstream first", []Link{{"b", op([]string{"mid"}, nil)}, {"a", op([]string{"in"}, []string{"mid"})}}, []string{"mid"}, "upstream first"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Chain(c.links, c.internal); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// halfOp emits its tokens and then rejects the batch when it holds "bad".
type halfOp struct{ tokenOp }

func (o *halfOp) Apply(stream string, rows *wololov1.RowBatch, out Emitter) error {
	if err := o.tokenOp.Apply(stream, rows, out); err != nil {
		return err
	}
	var bad bool
	_ = batch.EachToken(rows.GetTokens(), func(t []byte) { bad = bad || string(t) == "bad" })
	if bad {
		return fmt.Errorf("rejected")
	}
	return nil
}

// TestChainDropsARejectedBatchsInternalRows: what an operator emitted
// inside the task for a batch it then rejected is dropped with the batch,
// never handed on with the next one.
func TestChainDropsARejectedBatchsInternalRows(t *testing.T) {
	var log calls
	spec, err := Chain([]Link{
		{Stage: "up", Spec: Spec{Inputs: []string{"in"}, Outputs: []string{"mid"}, New: func() Operator {
			return &halfOp{tokenOp{name: "up", outs: []string{"mid"}, log: &log}}
		}, Stateless: true}},
		{Stage: "down", Spec: Spec{Inputs: []string{"mid"}, Outputs: []string{"out"}, New: func() Operator {
			return &tokenOp{name: "down", outs: []string{"out"}, log: &log}
		}}},
	}, []string{"mid"})
	if err != nil {
		t.Fatal(err)
	}
	op, out := spec.New(), &recorder{}
	if err := op.Apply("in", tokens("a", "bad"), out); err == nil {
		t.Fatal("the rejected batch was applied")
	}
	if err := op.Apply("in", tokens("b"), out); err != nil {
		t.Fatal(err)
	}
	want := calls{"up apply in [a bad]", "up apply in [b]", "down apply mid [b]"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("calls:\n got %q\nwant %q", log, want)
	}
}
