package election

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
)

// TestGoldenElection drives masters through testdata/election.txt, a
// script of ticks, crashes, restarts, death confirmations, partitions and
// forged messages on a network that delivers every message one step after
// it is sent, and compares what they decided (state changes, persisted
// terms, messages sent) with testdata/election.golden. Rewrite it with
// -update after a change meant to alter the sequence.
func TestGoldenElection(t *testing.T) {
	var net *scriptNet
	testkit.GoldenScript(t, "election.txt", "election.golden", func(w io.Writer, c testkit.Command) error {
		if c.Args[0] == "masters" {
			ids, err := scriptIDs(c.Args[1:])
			if err != nil {
				return err
			}
			net, err = newScriptNet(w, ids)
			return err
		}
		if net == nil {
			return fmt.Errorf("no masters yet")
		}
		net.w = w
		return net.do(c.Args)
	})
}

// scriptNet is the masters of a script and the network between them.
// Each step delivers the messages sent in the step before (unless a cut
// link or a crashed receiver loses them), in the order sent, then ticks
// every live master once, in id order.
type scriptNet struct {
	w         io.Writer
	ids       []ID
	nodes     map[ID]*Node // nil while crashed
	persisted map[ID]Term
	states    map[ID]State
	cut       map[[2]ID]bool // from, to
	flight    []Message
	step      int
}

func newScriptNet(w io.Writer, ids []ID) (*scriptNet, error) {
	n := &scriptNet{w: w, ids: slices.Sorted(slices.Values(ids)), nodes: map[ID]*Node{}, persisted: map[ID]Term{}, states: map[ID]State{}, cut: map[[2]ID]bool{}}
	for _, id := range n.ids {
		if err := n.start(id); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func scriptIDs(args []string) ([]ID, error) {
	var ids []ID
	for _, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("master id %q: %w", a, err)
		}
		ids = append(ids, ID(v))
	}
	return ids, nil
}

// start starts (or restarts) a master on its persisted term.
func (n *scriptNet) start(id ID) error {
	node, err := New(DefaultConfig(id, n.ids), n.persisted[id])
	if err != nil {
		return err
	}
	n.nodes[id] = node
	n.states[id] = node.State()
	fmt.Fprintf(n.w, "t=%d m%d starts on persisted term %d, listening\n", n.step, id, n.persisted[id])
	return nil
}

// The commands that take master ids, and how many.
var idArity = map[string]int{"crash": 1, "restart": 1, "confirm-dead": 2, "cut": 2, "heal": 0, "state": 0}

func (n *scriptNet) do(args []string) error {
	switch args[0] {
	case "tick":
		steps := 1
		if len(args) > 1 {
			var err error
			if steps, err = strconv.Atoi(args[1]); err != nil {
				return err
			}
		}
		for range steps {
			n.advance()
		}
		return nil
	case "partition":
		return n.partition(args[1:])
	case "inject":
		return n.inject(args[1:])
	}
	want, ok := idArity[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q", args[0])
	}
	ids, err := scriptIDs(args[1:])
	if err != nil {
		return err
	}
	if len(ids) != want {
		return fmt.Errorf("%s takes %d master ids", args[0], want)
	}
	for _, id := range ids {
		if !slices.Contains(n.ids, id) {
			return fmt.Errorf("no master %d", id)
		}
	}
	switch args[0] {
	case "crash":
		if n.nodes[ids[0]] == nil {
			return fmt.Errorf("m%d is down already", ids[0])
		}
		n.nodes[ids[0]] = nil
		fmt.Fprintf(n.w, "t=%d m%d crashes (persisted term %d)\n", n.step, ids[0], n.persisted[ids[0]])
	case "restart":
		if n.nodes[ids[0]] != nil {
			return fmt.Errorf("m%d is up", ids[0])
		}
		return n.start(ids[0])
	case "confirm-dead":
		by, dead := ids[0], ids[1]
		if node := n.nodes[by]; node != nil {
			n.apply(by, node.ConfirmDead(dead), fmt.Sprintf("its runtime confirming m%d dead", dead))
		}
	case "cut":
		n.cut[[2]ID{ids[0], ids[1]}] = true
	case "heal":
		clear(n.cut)
	case "state":
		for _, id := range n.ids {
			if n.nodes[id] == nil {
				fmt.Fprintf(n.w, "m%d down, persisted term %d\n", id, n.persisted[id])
				continue
			}
			fmt.Fprintf(n.w, "m%d %s, persisted term %d\n", id, describeState(n.states[id]), n.persisted[id])
		}
	}
	return nil
}

// partition cuts every link between the groups, given as ids parted by
// "|": "1 2 | 3".
func (n *scriptNet) partition(args []string) error {
	group := map[ID]int{}
	g := 0
	for _, a := range args {
		if a == "|" {
			g++
			continue
		}
		ids, err := scriptIDs([]string{a})
		if err != nil {
			return err
		}
		group[ids[0]] = g
	}
	for _, a := range n.ids {
		for _, b := range n.ids {
			if group[a] != group[b] {
				n.cut[[2]ID{a, b}] = true
			}
		}
	}
	return nil
}

// inject puts a forged message in flight: "inject KIND FROM TO TERM SEQ".
func (n *scriptNet) inject(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("inject KIND FROM TO TERM SEQ")
	}
	k := slices.Index(kindNames[:], args[0])
	if k <= 0 {
		return fmt.Errorf("unknown kind %q", args[0])
	}
	var v [4]uint64
	for i, a := range args[1:] {
		var err error
		if v[i], err = strconv.ParseUint(a, 10, 64); err != nil {
			return err
		}
	}
	n.flight = append(n.flight, Message{Kind: Kind(k), From: ID(v[0]), To: ID(v[1]), Term: Term(v[2]), Seq: v[3]})
	return nil
}

// advance is one step: deliveries, then ticks.
func (n *scriptNet) advance() {
	n.step++
	due := n.flight
	n.flight = nil
	for _, m := range due {
		node := n.nodes[m.To]
		if node == nil || n.cut[[2]ID{m.From, m.To}] {
			continue
		}
		n.apply(m.To, node.Receive(m), fmt.Sprintf("%s from m%d", m.Kind, m.From))
	}
	for _, id := range n.ids {
		if node := n.nodes[id]; node != nil {
			n.apply(id, node.Tick(), "tick")
		}
	}
}

// apply carries out an output as the adapter does (persist, state, send)
// and writes one line per effect.
func (n *scriptNet) apply(id ID, o Output, on string) {
	prefix := fmt.Sprintf("t=%d m%d on %s:", n.step, id, on)
	if o.Persist != nil {
		n.persisted[id] = *o.Persist
		fmt.Fprintf(n.w, "%s persists term %d\n", prefix, *o.Persist)
	}
	before := n.states[id]
	n.states[id] = o.State
	if before.Role != o.Role || before.Leader != o.Leader || before.Term != o.Term {
		fmt.Fprintf(n.w, "%s becomes %s\n", prefix, describeState(o.State))
	} else if before.Acting != o.Acting {
		fmt.Fprintf(n.w, "%s %s\n", prefix, map[bool]string{true: "starts acting", false: "stops acting"}[o.Acting])
	}
	// One line per kind of message, naming its receivers.
	for i := 0; i < len(o.Send); {
		m := o.Send[i]
		to := []string{}
		for ; i < len(o.Send) && o.Send[i].Kind == m.Kind && o.Send[i].Term == m.Term && o.Send[i].Seq == m.Seq; i++ {
			to = append(to, fmt.Sprintf("m%d", o.Send[i].To))
		}
		fmt.Fprintf(n.w, "%s sends %s(term %d, seq %d) to %s\n", prefix, m.Kind, m.Term, m.Seq, strings.Join(to, " "))
	}
	n.flight = append(n.flight, o.Send...)
}

func describeState(s State) string {
	var b strings.Builder
	b.WriteString(s.Role.String())
	switch {
	case s.Role == RoleFollower && s.Leader != None:
		fmt.Fprintf(&b, " of m%d", s.Leader)
	case s.Role == RoleFollower:
		b.WriteString(" without a leader")
	}
	fmt.Fprintf(&b, ", term %d", s.Term)
	if s.Acting {
		b.WriteString(", acting")
	} else if s.Role == RoleLeader {
		b.WriteString(", not acting")
	}
	return b.String()
}
