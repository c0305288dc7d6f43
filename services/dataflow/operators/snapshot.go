package operators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

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

type snapWriter struct{ b []byte }

func (w *snapWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *snapWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *snapWriter) bytes(p []byte)   { w.uvarint(uint64(len(p))); w.b = append(w.b, p...) }
func (w *snapWriter) byte(v byte)      { w.b = append(w.b, v) }
func (w *snapWriter) bool(v bool) {
	if v {
		w.byte(1)
	} else {
		w.byte(0)
	}
}

// civs writes a civ → counters map, sorted by name.
func (w *snapWriter) civs(m map[string]*civCount) {
	names := make([]string, 0, len(m))
	for civ := range m {
		names = append(names, civ)
	}
	sort.Strings(names)
	w.uvarint(uint64(len(names)))
	for _, civ := range names {
		w.bytes([]byte(civ))
		w.varint(m[civ].wins)
		w.varint(m[civ].count)
	}
}

// snapReader reads what a snapWriter wrote; the first error sticks, and
// every read after it returns zero values.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) fail() {
	if r.err == nil {
		r.err = errSnapshot
	}
	r.b = nil
}

func (r *snapReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *snapReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items each at least min bytes long, refusing one
// the rest of the snapshot cannot hold (so a corrupt count allocates
// nothing large).
func (r *snapReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/max(min, 1)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *snapReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *snapReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *snapReader) bool() bool { return r.byte() != 0 }

func (r *snapReader) version(what string) {
	if v := r.byte(); r.err == nil && v != snapshotVersion {
		r.err = fmt.Errorf("%s snapshot of version %d, want %d", what, v, snapshotVersion)
	}
}

// civs reads a civ map into m.
func (r *snapReader) civs(m map[string]*civCount) {
	for n := r.count(3); n > 0 && r.err == nil; n-- {
		civ := string(r.bytes())
		m[civ] = &civCount{wins: r.varint(), count: r.varint()}
	}
}

// end checks the whole snapshot was read.
func (r *snapReader) end() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = errSnapshot
	}
	return r.err
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
	w := &snapWriter{b: slices.Grow(dst, 64+len(t.arena)+t.len()*28)}
	w.byte(q2SnapshotVersion)
	w.b = binary.LittleEndian.AppendUint64(w.b, t.seed)
	w.bytes(t.arena)
	w.uvarint(uint64(t.len()))
	t.eachSlot(func(h uint32, off uint64, n uint32, m *q2Match) {
		w.uvarint(uint64(h))
		w.uvarint(off)
		w.uvarint(uint64(n))
		w.group(m)
	})
	g.appendWide(w)
	return w.b, nil
}

// group writes one match's group: in version 2 with the joins it
// qualifies for (version 1 had none).
func (w *snapWriter) group(m *q2Match) {
	w.byte(m.joins)
	w.byte(m.rows)
	for i := 0; i < 2; i++ {
		w.byte(byte(m.winner[i]))
		w.bool(m.hasRating[i])
		w.bool(m.wide[i])
		w.varint(m.units[i])
	}
}

// group reads what snapWriter.group wrote into m; v1 is a group of
// version 1.
func (r *snapReader) group(m *q2Match, v1 bool) {
	if !v1 {
		m.joins = r.byte()
	}
	m.rows = r.byte()
	for i := 0; i < 2; i++ {
		m.winner[i] = tri(r.byte())
		m.hasRating[i] = r.bool()
		m.wide[i] = r.bool()
		m.units[i] = r.varint()
	}
}

// appendWide writes the ratings too wide for units, by token.
func (g *Q2Grouper) appendWide(w *snapWriter) {
	tokens := make([]string, 0, len(g.wide))
	for t := range g.wide {
		tokens = append(tokens, t)
	}
	sort.Strings(tokens)
	w.uvarint(uint64(len(tokens)))
	for _, t := range tokens {
		w.bytes([]byte(t))
		for _, n := range g.wide[t] {
			w.bytes(n.Append(nil))
		}
	}
}

// Restore reads a snapshot of either version into an empty grouper.
func (g *Q2Grouper) Restore(state []byte) error {
	r := &snapReader{b: state}
	switch v := r.byte(); {
	case r.err != nil:
	case v == 1:
		n := r.count(8)
		g.matches = newFlatTable[q2Match](n)
		for ; n > 0 && r.err == nil; n-- {
			m, _ := g.matches.slot(r.bytes())
			r.group(m, true)
		}
	case v == 2 || v == q2SnapshotVersion:
		var seed uint64
		if len(r.b) < 8 {
			r.fail()
		} else {
			seed, r.b = binary.LittleEndian.Uint64(r.b), r.b[8:]
		}
		arena := r.bytes()
		n := r.count(8)
		g.matches = flatTableOf[q2Match](seed, arena, n)
		for ; n > 0 && r.err == nil; n-- {
			h, off, size := r.uvarint(), r.uvarint(), r.uvarint()
			if v == 2 && off <= uint64(len(arena)) && size <= uint64(len(arena))-off {
				h = uint64(g.matches.hash(arena[off : off+size])) // stored by the old hash
			}
			m, ok := g.matches.place(uint32(h), off, uint32(size))
			if !ok || h > math.MaxUint32 || size > math.MaxUint32 {
				r.fail()
				break
			}
			r.group(m, false)
		}
	default:
		return fmt.Errorf("q2-grouper snapshot of version %d, want 1 to %d", v, q2SnapshotVersion)
	}
	for n := r.count(3); n > 0 && r.err == nil; n-- {
		token := string(r.bytes())
		var ratings [2]schema.Number
		for i := range ratings {
			v, ok := schema.ParseNumber(r.bytes())
			if !ok {
				r.fail()
			}
			ratings[i] = v
		}
		g.wide[token] = ratings
	}
	return r.end()
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
	w := &snapWriter{b: slices.Grow(dst, 64+n*20+len(j.pending)*24)}
	w.byte(snapshotVersion)
	w.uvarint(uint64(n))
	if own != nil {
		own.each(func(token []byte) { w.bytes(token) })
	}
	w.bool(j.matchesDone)
	w.uvarint(uint64(len(j.pending)))
	for _, p := range j.pending {
		w.bytes([]byte(p.match))
		w.bytes([]byte(p.civ))
		w.bool(p.win)
	}
	w.civs(j.civs)
	return w.b, nil
}

// Restore reads a snapshot into an empty joiner.
func (j *Joiner) Restore(state []byte) error {
	r := &snapReader{b: state}
	r.version("joiner")
	n := r.count(1)
	if _, own := j.qualifying.(*tokenSet); own {
		j.qualifying = newTokenSet(n)
	}
	for ; n > 0 && r.err == nil; n-- {
		j.qualifying.add(r.bytes())
	}
	j.matchesDone = r.bool()
	for n := r.count(3); n > 0 && r.err == nil; n-- {
		match := string(r.bytes())
		civ := j.internCiv(r.bytes())
		j.pending = append(j.pending, pendingPlayer{match: match, civ: civ, win: r.bool()})
	}
	r.civs(j.civs)
	return r.end()
}

// AppendSnapshot writes the four answers gathered so far.
func (r *Results) AppendSnapshot(dst []byte) ([]byte, error) {
	w := &snapWriter{b: dst}
	w.byte(snapshotVersion)
	for _, set := range []map[string]struct{}{r.q1, r.q2} {
		tokens := make([]string, 0, len(set))
		for t := range set {
			tokens = append(tokens, t)
		}
		sort.Strings(tokens)
		w.uvarint(uint64(len(tokens)))
		for _, t := range tokens {
			w.bytes([]byte(t))
		}
	}
	w.civs(r.q3)
	w.civs(r.q4)
	return w.b, nil
}

// Restore reads a snapshot into an empty sink.
func (r *Results) Restore(state []byte) error {
	rd := &snapReader{b: state}
	rd.version("results")
	for _, set := range []map[string]struct{}{r.q1, r.q2} {
		for n := rd.count(1); n > 0 && rd.err == nil; n-- {
			set[string(rd.bytes())] = struct{}{}
		}
	}
	rd.civs(r.q3)
	rd.civs(r.q4)
	return rd.end()
}
