package stage

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestGoldenCommit drives the stage plan (planGroup) and the
// transport.Committer through testdata/commit.txt, as a job's actor does
// with them (plan a group of deliveries against the inbox, commit what it
// applies with what the step emits, acknowledge), with downstream
// acknowledgements, failed store commits and restarts from the store in
// between, and compares what they decided (the plan, the numbered
// entries, the watermarks and ends, the acknowledgements, what a restart
// restores) with testdata/commit.golden. Rewrite it with -update after a
// change meant to alter the sequence.
func TestGoldenCommit(t *testing.T) {
	p := newScriptProcess()
	testkit.GoldenScript(t, "commit.txt", "commit.golden", func(w io.Writer, c testkit.Command) error {
		return p.do(w, c.Args)
	})
}

// FailingStore is a MemStore whose commits fail while Failing is set:
// the store of the tests of a failed commit, here and in runtime_test.go
// (whose external test package sees it as stage.FailingStore; it exists
// only in the package's test build).
type FailingStore struct {
	*transport.MemStore
	Failing bool
}

func (s *FailingStore) Commit(c *transport.Commit) error {
	if s.Failing {
		return errors.New("injected commit failure")
	}
	return s.MemStore.Commit(c)
}

// scriptProcess is one process's exactly-once state: its store, and the
// Committer with its inbox and outbox that a restart makes anew. Input
// channels are named after their sender ("a"), output channels after
// their receiver ("x"), all of job "j".
type scriptProcess struct {
	store     *FailingStore
	committer *transport.Committer
	inputs    map[string]bool // the senders seen, for state
}

func newScriptProcess() *scriptProcess {
	p := &scriptProcess{store: &FailingStore{MemStore: transport.NewMemStore()}, inputs: map[string]bool{}}
	p.start()
	return p
}

func (p *scriptProcess) start() {
	p.committer = transport.NewCommitter(p.store, transport.NewOutbox(p.store), transport.NewInbox(), nil)
}

func inChannel(sender string) transport.ChannelID {
	return transport.ChannelID{Job: "j", Stream: "in", Sender: sender, Receiver: "me-0"}
}

func outChannel(receiver string) transport.ChannelID {
	return transport.ChannelID{Job: "j", Stream: "out", Sender: "me-0", Receiver: receiver}
}

// scriptBatch reads "a3" (batch 3 of a) or "a3e" (an EOF) into its
// channel's name, number and EOF.
func scriptBatch(s string) (name string, seq uint64, eof bool, err error) {
	s, eof = strings.CutSuffix(s, "e")
	i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if i <= 0 {
		return "", 0, false, fmt.Errorf("batch %q: want a channel and a number, as a3 or a3e", s)
	}
	seq, err = strconv.ParseUint(s[i:], 10, 64)
	return s[:i], seq, eof, err
}

func (p *scriptProcess) do(w io.Writer, args []string) error {
	switch args[0] {
	case "deliver":
		return p.deliver(w, args[1:])
	case "ack":
		if len(args) != 3 {
			return fmt.Errorf("ack RECEIVER SEQ")
		}
		seq, err := strconv.ParseUint(args[2], 10, 64)
		if err != nil {
			return err
		}
		done, err := p.committer.Outbox().Ack(outChannel(args[1]), seq)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s acknowledged up to %d, complete %v\n", args[1], seq, done)
	case "fail":
		p.store.Failing = true
	case "heal":
		p.store.Failing = false
	case "restart":
		img, err := p.store.Load()
		if err != nil {
			return err
		}
		p.start()
		var resume []string
		for _, ch := range p.committer.Restore(img) {
			resume = append(resume, ch.Receiver)
		}
		slices.Sort(resume)
		fmt.Fprintf(w, "restored from the store; channels to resume: %s\n", list(resume))
		p.writeState(w)
	case "state":
		p.writeState(w)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	return nil
}

// deliver is one group of deliveries, "a1 a2 b1e", optionally followed by
// "emit x y ye": what applying the group emits (as the operator would),
// one batch per name, "e" an EOF.
func (p *scriptProcess) deliver(w io.Writer, args []string) error {
	in, emit := args, []string(nil)
	if i := slices.Index(args, "emit"); i >= 0 {
		in, emit = args[:i], args[i+1:]
	}
	var acks []string
	var group []delivery
	for _, a := range in {
		sender, seq, eof, err := scriptBatch(a)
		if err != nil {
			return err
		}
		p.inputs[sender] = true
		group = append(group, delivery{ch: inChannel(sender), batch: &wololov1.Batch{Seq: seq, Eof: eof}, done: func(err error) {
			if err != nil {
				acks = append(acks, a+" refused ("+err.Error()+")")
			} else {
				acks = append(acks, a)
			}
		}})
	}
	pl := planGroup(group, p.committer.Inbox().State)
	fmt.Fprintf(w, "plan: apply %s; duplicates %s\n", deliveries(pl.apply), deliveries(pl.dups))
	for _, r := range pl.refused {
		fmt.Fprintf(w, "refused: %s%d: %v\n", r.d.ch.Sender, r.d.batch.Seq, r.err)
	}
	if len(pl.apply) == 0 {
		// Nothing to commit: the duplicates are acknowledged at once.
		for _, d := range pl.dups {
			d.done(nil)
		}
		fmt.Fprintf(w, "no commit; acknowledged %s\n", list(acks))
		return nil
	}
	s := &transport.Step{Commit: transport.Commit{Job: "j", Inputs: pl.marks}, Ended: pl.ended}
	for _, e := range emit {
		name, eof := strings.CutSuffix(e, "e")
		s.Emit = append(s.Emit, transport.Output{Channel: outChannel(name), EOF: eof})
	}
	for _, d := range append(pl.dups, pl.apply...) {
		s.Acks = append(s.Acks, d.done)
	}
	entries, err := p.committer.Commit(s)
	if err != nil {
		fmt.Fprintf(w, "commit failed: %v\n", err)
		fmt.Fprintf(w, "acknowledgements: %s\n", list(acks))
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, entryName(e))
	}
	var marks, ended []string
	for _, ch := range slices.SortedFunc(maps.Keys(pl.marks), byName) {
		marks = append(marks, fmt.Sprintf("%s=%d", ch.Sender, pl.marks[ch]))
	}
	for _, ch := range pl.ended {
		ended = append(ended, ch.Sender)
	}
	fmt.Fprintf(w, "committed: watermarks %s; ended %s; numbered %s\n", list(marks), list(ended), list(names))
	fmt.Fprintf(w, "acknowledged %s\n", list(acks))
	return nil
}

// writeState writes the inbox, the outbox and the store.
func (p *scriptProcess) writeState(w io.Writer) {
	var in []string
	for _, sender := range slices.Sorted(maps.Keys(p.inputs)) {
		wm, ended := p.committer.Inbox().State(inChannel(sender))
		s := fmt.Sprintf("%s at %d", sender, wm)
		if ended {
			s += " ended"
		}
		in = append(in, s)
	}
	fmt.Fprintf(w, "  inbox: %s\n", list(in))
	var out []string
	for _, c := range p.committer.Outbox().Channels("j") {
		s := fmt.Sprintf("%s last %d acked %d pending %d", c.Channel.Receiver, c.LastSeq, c.Acked, c.Depth)
		if c.Done {
			s += " complete"
		}
		out = append(out, s)
	}
	fmt.Fprintf(w, "  outbox: %s\n", list(out))
	img, err := p.store.Load()
	if err != nil {
		fmt.Fprintf(w, "  store: %v\n", err)
		return
	}
	ji := img.Jobs["j"]
	if ji == nil {
		fmt.Fprintf(w, "  store: nothing of the job\n")
		return
	}
	var marks, records, entries []string
	for _, ch := range slices.SortedFunc(maps.Keys(ji.Watermarks), byName) {
		marks = append(marks, fmt.Sprintf("%s=%d", ch.Sender, ji.Watermarks[ch]))
	}
	records = slices.Sorted(maps.Keys(ji.Records))
	for _, ch := range slices.SortedFunc(maps.Keys(ji.Reserved), byName) {
		var held []string
		for _, e := range ji.Outbox[ch] {
			held = append(held, entryName(e))
		}
		entries = append(entries, fmt.Sprintf("%s reserved %d acked %d holds %s", ch.Receiver, ji.Reserved[ch], ji.Acked[ch], list(held)))
	}
	fmt.Fprintf(w, "  store: watermarks %s; records %s\n", list(marks), list(records))
	fmt.Fprintf(w, "  store outbox: %s\n", list(entries))
}

func byName(a, b transport.ChannelID) int { return strings.Compare(a.String(), b.String()) }

// entryName is "x#3", "x#4e" for an EOF.
func entryName(e transport.Entry) string {
	s := fmt.Sprintf("%s#%d", e.Channel.Receiver, e.Seq)
	if e.EOF {
		s += "e"
	}
	return s
}

func deliveries(ds []delivery) string {
	var out []string
	for _, d := range ds {
		s := fmt.Sprintf("%s%d", d.ch.Sender, d.batch.Seq)
		if d.batch.Eof {
			s += "e"
		}
		out = append(out, s)
	}
	return list(out)
}

// list joins names, or says there are none.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
