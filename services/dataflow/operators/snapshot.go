package operators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// Snapshots of the stateful operators (stage.Snapshotter): the runtime
// writes one in place of the state log once the log has grown past the
// last snapshot, so that a restarted process restores the snapshot and
// replays only what came after it instead of every batch of the job.
//
// The encoding is a plain sequence of fields: unsigned and signed varints,
// and byte strings prefixed by their length. Each operator writes a
// version byte first, so a later change of its state can still read
// snapshots written before it.

const snapshotVersion = 1

// errSnapshot is a snapshot that cannot be read.
var errSnapshot = errors.New("snapshot is corrupt")

// snapWriter is snapcodec's Writer with this package's pieces.
type snapWriter struct{ snapcodec.Writer }

func (w *snapWriter) civs(m map[string]*civCount) {
	names := make([]string, 0, len(m))
	for civ := range m {
		names = append(names, civ)
	}
	sort.Strings(names)
	w.Uvarint(uint64(len(names)))
	for _, civ := range names {
		w.Bytes([]byte(civ))
		w.Varint(m[civ].wins)
		w.Varint(m[civ].count)
	}
}

// snapReader reads what a snapWriter wrote; the first error sticks, and
// every read after it returns zero values.
type snapReader struct{ snapcodec.Reader }

// newSnapReader reads state, failing with errSnapshot.
func newSnapReader(state []byte) *snapReader {
	return &snapReader{snapcodec.Reader{B: state, Corrupt: errSnapshot}}
}

func (r *snapReader) version(what string) {
	if v := r.Byte(); r.Err == nil && v != snapshotVersion {
		r.Err = fmt.Errorf("%s snapshot of version %d, want %d", what, v, snapshotVersion)
	}
}

// civs reads a civ map into m.
func (r *snapReader) civs(m map[string]*civCount) {
	for n := r.Count(3); n > 0 && r.Err == nil; n-- {
		civ := string(r.Bytes())
		m[civ] = &civCount{wins: r.Varint(), count: r.Varint()}
	}
}

func tri(v byte) batch.Tri { return batch.Tri(v % 3) }

// q2SnapshotVersion is the grouper's snapshot format. Version 1 wrote each
// match's token next to its group, which read the token arena at random,
// one cache miss per match (about 100 ns at millions of matches), and
// hashed every token again to read it back. Version 2 writes the table's
// hash seed and arena once, whole, and each group with its hash and its
// token's place in the arena, all in memory order; reading it back places
// each entry by its hash, with no token read or hashed. Version 3 is
// version 2 with the hash that ends in a final mix (hashToken): its
// stored hashes are the new function's, where version 2's are the old
// one's, so a version 2 snapshot is read back by hashing each token
// again. Restore reads all three.
const q2SnapshotVersion = 3

// AppendSnapshot writes every match's group, and the ratings too wide for
// units.
func (g *Q2Grouper) AppendSnapshot(dst []byte) ([]byte, error) {
	t := g.matches
	w := &snapWriter{snapcodec.Writer{B: slices.Grow(dst, 64+len(t.arena)+t.len()*28)}}
	w.Byte(q2SnapshotVersion)
	w.B = binary.LittleEndian.AppendUint64(w.B, t.seed)
	w.Bytes(t.arena)
	w.Uvarint(uint64(t.len()))
	t.eachSlot(func(h uint32, off uint64, n uint32, m *q2Match) {
		w.Uvarint(uint64(h))
		w.Uvarint(off)
		w.Uvarint(uint64(n))
		w.group(m)
	})
	g.appendWide(w)
	return w.B, nil
}

// group writes one match's group: in version 2 with the joins it
// qualifies for (version 1 had none).
func (w *snapWriter) group(m *q2Match) {
	w.Byte(m.joins)
	w.Byte(m.rows)
	for i := 0; i < 2; i++ {
		w.Byte(byte(m.winner[i]))
		w.Bool(m.hasRating[i])
		w.Bool(m.wide[i])
		w.Varint(m.units[i])
	}
}

// group reads what snapWriter.group wrote into m; v1 is a group of
// version 1.
func (r *snapReader) group(m *q2Match, v1 bool) {
	if !v1 {
		m.joins = r.Byte()
	}
	m.rows = r.Byte()
	for i := 0; i < 2; i++ {
		m.winner[i] = tri(r.Byte())
		m.hasRating[i] = r.Bool()
		m.wide[i] = r.Bool()
		m.units[i] = r.Varint()
	}
}

// appendWide writes the ratings too wide for units, by token.
func (g *Q2Grouper) appendWide(w *snapWriter) {
	tokens := make([]string, 0, len(g.wide))
	for t := range g.wide {
		tokens = append(tokens, t)
	}
	sort.Strings(tokens)
	w.Uvarint(uint64(len(tokens)))
	for _, t := range tokens {
		w.Bytes([]byte(t))
		for _, n := range g.wide[t] {
			w.Bytes(n.Append(nil))
		}
	}
}

// Restore reads a snapshot of either version into an empty grouper.
func (g *Q2Grouper) Restore(state []byte) error {
	r := newSnapReader(state)
	switch v := r.Byte(); {
	case r.Err != nil:
	case v == 1:
		n := r.Count(8)
		g.matches = newFlatTable[q2Match](n)
		for ; n > 0 && r.Err == nil; n-- {
			m, _ := g.matches.slot(r.Bytes())
			r.group(m, true)
		}
	case v == 2 || v == q2SnapshotVersion:
		var seed uint64
		if len(r.B) < 8 {
			r.Fail(nil)
		} else {
			seed, r.B = binary.LittleEndian.Uint64(r.B), r.B[8:]
		}
		arena := r.Bytes()
		n := r.Count(8)
		g.matches = flatTableOf[q2Match](seed, arena, n)
		for ; n > 0 && r.Err == nil; n-- {
			h, off, size := r.Uvarint(), r.Uvarint(), r.Uvarint()
			if v == 2 && off <= uint64(len(arena)) && size <= uint64(len(arena))-off {
				h = uint64(g.matches.hash(arena[off : off+size])) // stored by the old hash
			}
			m, ok := g.matches.place(uint32(h), off, uint32(size))
			if !ok || h > math.MaxUint32 || size > math.MaxUint32 {
				r.Fail(nil)
				break
			}
			r.group(m, false)
		}
	default:
		return fmt.Errorf("q2-grouper snapshot of version %d, want 1 to %d", v, q2SnapshotVersion)
	}
	for n := r.Count(3); n > 0 && r.Err == nil; n-- {
		token := string(r.Bytes())
		var ratings [2]schema.Number
		for i := range ratings {
			v, ok := schema.ParseNumber(r.Bytes())
			if !ok {
				r.Fail(nil)
			}
			ratings[i] = v
		}
		g.wide[token] = ratings
	}
	return r.End()
}

// AppendSnapshot writes the qualifying matches, whether they are all known,
// the buffered player rows and the counters.
func (j *Joiner) AppendSnapshot(dst []byte) ([]byte, error) {
	// The qualifying matches, where the joiner keeps them itself; in a
	// MatchTable they are flags of the grouper's groups, in its snapshot.
	own, _ := j.qualifying.(*tokenSet)
	n := 0
	if own != nil {
		n = own.len()
	}
	w := &snapWriter{snapcodec.Writer{B: slices.Grow(dst, 64+n*20+len(j.pending)*24)}}
	w.Byte(snapshotVersion)
	w.Uvarint(uint64(n))
	if own != nil {
		own.each(func(token []byte) { w.Bytes(token) })
	}
	w.Bool(j.matchesDone)
	w.Uvarint(uint64(len(j.pending)))
	for _, p := range j.pending {
		w.Bytes([]byte(p.match))
		w.Bytes([]byte(p.civ))
		w.Bool(p.win)
	}
	w.civs(j.civs)
	return w.B, nil
}

// Restore reads a snapshot into an empty joiner.
func (j *Joiner) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("joiner")
	n := r.Count(1)
	if _, own := j.qualifying.(*tokenSet); own {
		j.qualifying = newTokenSet(n)
	}
	for ; n > 0 && r.Err == nil; n-- {
		j.qualifying.add(r.Bytes())
	}
	j.matchesDone = r.Bool()
	for n := r.Count(3); n > 0 && r.Err == nil; n-- {
		match := string(r.Bytes())
		civ := j.internCiv(r.Bytes())
		j.pending = append(j.pending, pendingPlayer{match: match, civ: civ, win: r.Bool()})
	}
	r.civs(j.civs)
	return r.End()
}

// AppendSnapshot writes the four answers gathered so far.
func (r *Results) AppendSnapshot(dst []byte) ([]byte, error) {
	w := &snapWriter{snapcodec.Writer{B: dst}}
	w.Byte(snapshotVersion)
	for _, set := range []map[string]struct{}{r.q1, r.q2} {
		tokens := make([]string, 0, len(set))
		for t := range set {
			tokens = append(tokens, t)
		}
		sort.Strings(tokens)
		w.Uvarint(uint64(len(tokens)))
		for _, t := range tokens {
			w.Bytes([]byte(t))
		}
	}
	w.civs(r.q3)
	w.civs(r.q4)
	return w.B, nil
}

// Restore reads a snapshot into an empty sink.
func (r *Results) Restore(state []byte) error {
	rd := newSnapReader(state)
	rd.version("results")
	for _, set := range []map[string]struct{}{r.q1, r.q2} {
		for n := rd.Count(1); n > 0 && rd.Err == nil; n-- {
			set[string(rd.Bytes())] = struct{}{}
		}
	}
	rd.civs(r.q3)
	rd.civs(r.q4)
	return rd.End()
}
