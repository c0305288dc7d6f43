package exec

// keyArena holds a KeyTable's keys' bytes, one after the other, in
// blocks that never move: a table of millions of keys grew one slice
// before, which append copied whole each time it grew by a quarter
// (every byte about four times, and the old and the new slice held
// together while it did), and whose room past its keys counted against
// the job's state until the next growth.
//
// Offsets are of one space of uint32s cut in blocks of arenaBlock bytes:
// block i holds offsets [i*arenaBlock, (i+1)*arenaBlock), its bytes in
// blocks[i]. A key lies within one block: one that does not fit in the
// room left in the last block starts the next one. So a key is found
// from where the key before it ends and where it ends (the table's ends)
// alone, with no offset of its own: it starts where the one before ends,
// unless that is inside a block that the key's last byte is not in,
// when it starts at the next block (keyStart). A key longer than a block
// starts a block of its own length, which the offsets of the blocks it
// spans name (blocks past its first are nil), and the next key starts at
// the block after them. Block 0 grows by doubling, up to arenaBlock, so
// that the many small tables of a job (an aggregate by civ) take a few
// bytes, not a block.
type keyArena struct {
	blocks [][]byte
	end    uint32 // the offset where the last key ends
	caps   int64  // the blocks' capacities, added up (bytes)
}

// arenaBlock is the bytes of a full block: large enough that its last
// key's room left unused is nothing, small enough that a table's last
// block, not full, is little against its keys.
const arenaBlock = 1 << 20

// keyStart is the offset of the key that ends at end, after a key that
// ends at prev.
func keyStart(prev, end uint32) uint32 {
	if prev%arenaBlock == 0 || end == prev || prev/arenaBlock == (end-1)/arenaBlock {
		return prev
	}
	return (prev/arenaBlock + 1) * arenaBlock
}

// key is the key that ends at end, after a key that ends at prev (a
// table's ends of the slots s-1 and s).
func (a *keyArena) key(prev, end uint32) []byte {
	if end == prev {
		return nil
	}
	from := prev
	if prev/arenaBlock != (end-1)/arenaBlock { // not in the block where the key before ends
		from = keyStart(prev, end)
	}
	off := from % arenaBlock
	return a.blocks[from/arenaBlock][off : off+end-from]
}

// lastByte is the byte before offset end, found from end alone for
// touch: the last of the key that ends there (of a key before it, for an
// empty key), or 0 when it is in no block (a long key's, past its first)
// or there is none.
func (a *keyArena) lastByte(end uint32) byte {
	if end == 0 {
		return 0
	}
	i, off := (end-1)/arenaBlock, (end-1)%arenaBlock
	if b := a.blocks[i]; int(off) < len(b) {
		return b[off]
	}
	return 0
}

// add appends a key of n bytes, and returns its bytes, to be written;
// it ends at a.end then. It panics past maxArena bytes of offsets.
func (a *keyArena) add(n int) []byte {
	if n == 0 { // an empty key (no columns) takes no room, wherever the last ends
		return nil
	}
	at := int(a.end)
	if i := at / arenaBlock; at%arenaBlock != 0 && (i >= len(a.blocks) || a.blocks[i] == nil || at%arenaBlock+n > arenaBlock) {
		at = (i + 1) * arenaBlock // the key does not fit in the last block (or that is a long key's)
	}
	if at+n > maxArena {
		// Far past a process's memory (4 GiB of keys in one table,
		// where a budget of 512 MiB is the default).
		panic("exec: a key table past 4 GiB of keys")
	}
	i, off := at/arenaBlock, at%arenaBlock
	for len(a.blocks) <= (at+n-1)/arenaBlock { // a long key's blocks past its first are nil
		a.blocks = append(a.blocks, nil)
	}
	b := a.blocks[i]
	if off+n > cap(b) {
		size := arenaBlock
		switch {
		case n > arenaBlock: // a key of its own block
			size = n
		case i == 0: // block 0 doubles
			size = min(arenaBlock, max(2*cap(b), off+n, 64))
		}
		grown := make([]byte, off, size)
		copy(grown, b)
		a.caps += int64(size - cap(b))
		b = grown
	}
	b = b[:off+n]
	a.blocks[i] = b
	a.end = uint32(at + n)
	return b[off:]
}

// bytes is the memory the blocks take.
func (a *keyArena) bytes() int64 { return a.caps }
