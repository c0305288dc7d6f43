package stage

import (
	"fmt"
	"strings"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/transport"
)

// slot is the channel to one receiver instance of an output stream.
type slot struct {
	ch    transport.ChannelID
	ended bool // its EOF is emitted (Outputs.End) or committed before
	built int  // batches emitted for it since the last Drain
}

// Emitted is one batch emitted for a channel: what Encode makes the
// Committer's outputs.
type Emitted struct {
	Channel transport.ChannelID
	EOF     bool
	Rows    *wololov1.RowBatch // nil for an EOF, or when Encoded holds them
	// Encoded is the batch as the operator encoded it (Emitter.Encoded),
	// of Count rows, when Rows is nil.
	Encoded []byte
	Count   int
}

// RowBatch is the batch's rows as Go values: Rows, or Encoded decoded.
func (e Emitted) RowBatch() (*wololov1.RowBatch, error) {
	if e.Rows != nil || e.Encoded == nil {
		return e.Rows, nil
	}
	rows := &wololov1.RowBatch{}
	if err := proto.Unmarshal(e.Encoded, rows); err != nil {
		return nil, fmt.Errorf("%s: %w", e.Channel, err)
	}
	return rows, nil
}

// rows is how many rows the batch holds.
func (e Emitted) rows() int {
	if e.Rows == nil {
		return e.Count
	}
	return batch.Rows(e.Rows)
}

// Encode makes emitted batches the Committer's outputs: each batch's rows
// encoded (batch.Encode: sized once, allocated to fit, the one time they
// are) with their count.
func Encode(batches []Emitted) ([]transport.Output, error) {
	if len(batches) == 0 {
		return nil, nil
	}
	out := make([]transport.Output, len(batches))
	for i, b := range batches {
		out[i] = transport.Output{Channel: b.Channel, EOF: b.EOF}
		if b.Rows == nil {
			out[i].Rows, out[i].Count = b.Encoded, b.Count
			continue
		}
		var err error
		if out[i].Rows, out[i].Count, err = batch.Encode(b.Rows); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Channel, err)
		}
	}
	return out, nil
}

// Outputs is the Emitter of one job at one instance. It takes the batches
// an operator routed to receiver instances; it numbers nothing: the
// transport.Committer numbers what Drain returns (encoded) as it commits
// it, so a failed application can be discarded without a gap in any
// sequence.
type Outputs struct {
	streams map[string][]*slot
	// lastStream and lastSlots remember the last stream's slots.
	lastStream string
	lastSlots  []*slot
	order      []*slot
	built      []Emitted
	records    map[string][]byte
	rowsOut    atomic.Int64
	finished   bool
	// endedNow are the streams End ended since the last Drain (Discard
	// opens them again).
	endedNow []string
	most     int // Built
	// interrupted, when set, says that the job was dropped (Interrupted).
	interrupted func() bool
}

// Interrupter is an Emitter that says when the job it emits for has been
// dropped while an operator runs (Outputs, in the runtime): an operator
// in a long loop (a join making its rows chunk by chunk) checks it
// between two pieces of work and stops, so that a dropped or cancelled
// job's step ends within a piece, not after all of it. What it emitted
// then is never committed.
type Interrupter interface {
	Interrupted() bool
}

// Interrupted implements Interrupter: false unless the runtime dropped
// the job.
func (o *Outputs) Interrupted() bool { return o.interrupted != nil && o.interrupted() }

// Edge is one stream of a job at one instance, and the stage at its
// other end with that stage's instance count: where its batches come
// from (an input) or go to (an output).
type Edge struct {
	Stream   string
	Stage    string
	Replicas int
}

// Wiring is what a job reads and writes at an instance of a stage.
type Wiring struct {
	Inputs  []Edge
	Outputs []Edge
}

// NewOutputs returns the emitter of job at instance self for the given
// output links.
func NewOutputs(self deploy.Instance, job string, links []Edge) *Outputs {
	o := &Outputs{streams: map[string][]*slot{}}
	for _, l := range links {
		slots := make([]*slot, l.Replicas)
		for i := range slots {
			to := deploy.Instance{Stage: l.Stage, Index: i}
			slots[i] = &slot{ch: transport.ChannelID{Job: job, Stream: l.Stream, Sender: self.Name(), Receiver: to.Name()}}
			o.order = append(o.order, slots[i])
		}
		o.streams[l.Stream] = slots
	}
	return o
}

// slots returns a stream's slots; emitting on a stream not declared, or
// ended, is a bug of the operator.
func (o *Outputs) slots(stream string) []*slot {
	slots := o.lastSlots
	if stream != o.lastStream || slots == nil { // rows come in runs of one stream
		var ok bool
		if slots, ok = o.streams[stream]; !ok {
			panic(fmt.Sprintf("operator emitted on undeclared stream %q", stream))
		}
		o.lastStream, o.lastSlots = stream, slots
	}
	if len(slots) > 0 && slots[0].ended {
		panic(fmt.Sprintf("operator emitted on stream %q after its end", stream))
	}
	return slots
}

// Batch emits a batch of rows already routed: to receiver instance to of
// stream (a SQL plan's exchange, which routes its rows by its own key).
func (o *Outputs) Batch(stream string, to int, rows *wololov1.RowBatch) {
	o.routed(stream, to, Emitted{Rows: rows})
}

// Encoded emits rows already encoded: Batch of their bytes.
func (o *Outputs) Encoded(stream string, to int, encoded []byte, rows int) {
	o.routed(stream, to, Emitted{Encoded: encoded, Count: rows})
}

// routed emits a batch the operator routed itself (Batch, Encoded) on
// receiver instance to's channel of stream.
func (o *Outputs) routed(stream string, to int, e Emitted) {
	slots := o.slots(stream)
	if to < 0 || to >= len(slots) {
		panic(fmt.Sprintf("operator emitted to instance %d of stream %q, which has %d", to, stream, len(slots)))
	}
	s := slots[to]
	e.Channel = s.ch
	o.built = append(o.built, e)
	o.count(s)
}

// End ends a stream before the job does: its EOF goes to every receiver
// in the next commit, and nothing more may be emitted on it. The commit
// also records it (EndedOutputRecord), so that a restarted instance does
// not end it again (MarkEnded). Ending an ended stream does nothing.
func (o *Outputs) End(stream string) {
	slots, ok := o.streams[stream]
	if !ok {
		panic(fmt.Sprintf("operator ended undeclared stream %q", stream))
	}
	if len(slots) == 0 || slots[0].ended {
		return
	}
	for _, s := range slots {
		o.built = append(o.built, Emitted{Channel: s.ch, EOF: true})
		s.ended = true
	}
	o.endedNow = append(o.endedNow, stream)
	o.Record(EndedOutputRecord(stream), []byte{1})
}

// EndedOutputRecord is the record of a job that says its output stream
// was ended before the job finished (Outputs.End).
func EndedOutputRecord(stream string) string { return endedOutputPrefix + stream }

const endedOutputPrefix = "stage/output-ended/"

// MarkEnded notes the output streams the job's records say were ended
// (EndedOutputRecord), on a restart: their EOFs are committed, and Drain
// does not send them again. Records of other streams are ignored.
func (o *Outputs) MarkEnded(records map[string][]byte) {
	for k := range records {
		stream, ok := strings.CutPrefix(k, endedOutputPrefix)
		if !ok {
			continue
		}
		for _, s := range o.streams[stream] {
			s.ended = true
		}
	}
}

// Built is the most batches emitted for one channel since the last Drain:
// what an outbox limit per channel is to be compared with.
func (o *Outputs) Built() int { return o.most }

func (o *Outputs) count(s *slot) {
	s.built++
	o.most = max(o.most, s.built)
}

// resetCounts starts Built again from none.
func (o *Outputs) resetCounts() {
	for _, s := range o.order {
		s.built = 0
	}
	o.most = 0
}

// Record stores a per-job value in the next commit.
func (o *Outputs) Record(key string, value []byte) {
	if o.records == nil {
		o.records = map[string][]byte{}
	}
	o.records[key] = value
}

// Drain returns everything emitted since the last Drain, with the
// records. With eof, every output channel also gets its
// EOF batch, and nothing more may be emitted.
func (o *Outputs) Drain(eof bool) ([]Emitted, map[string][]byte) {
	if o.finished {
		return nil, nil
	}
	out := make([]Emitted, 0, len(o.built)+len(o.order))
	for _, b := range o.built {
		o.rowsOut.Add(int64(b.rows()))
		out = append(out, b)
	}
	if eof {
		for _, s := range o.order {
			if !s.ended {
				out = append(out, Emitted{Channel: s.ch, EOF: true})
			}
		}
		o.finished = true
	}
	records := o.records
	o.built, o.records, o.endedNow = o.built[:0], nil, o.endedNow[:0]
	o.resetCounts()
	return out, records
}

// Discard drops everything emitted since the last Drain.
func (o *Outputs) Discard() {
	for _, stream := range o.endedNow {
		for _, s := range o.streams[stream] {
			s.ended = false
		}
	}
	o.built, o.records, o.endedNow = o.built[:0], nil, o.endedNow[:0]
	o.resetCounts()
}

// Channels lists every output channel, for flow control.
func (o *Outputs) Channels() []transport.ChannelID {
	out := make([]transport.ChannelID, len(o.order))
	for i, s := range o.order {
		out[i] = s.ch
	}
	return out
}

// RowsOut is the number of rows emitted so far.
func (o *Outputs) RowsOut() int64 { return o.rowsOut.Load() }
