package incr

// refLists are lists of stored rows, one per key slot, each in the order
// its rows were added: linked lists through flat arrays of int32, so
// that a slot costs no slice of its own to grow and the collector finds
// no pointer to scan per slot (a semi-join keeps one list per key of the
// outer side: millions). A node let go is used again.
type refLists struct {
	head, tail []int32 // per slot: its first and last node, +1 (0: none)
	next       []int32 // per node: the next of its list, +1 (0: the last); of a free node, the next free
	refs       []ref   // per node: its row
	free       int32   // the first free node, +1 (0: none)
	n          int     // the rows in the lists
}

// grow makes the lists of slots up to n, empty.
func (l *refLists) grow(n int) {
	if d := n - len(l.head); d > 0 {
		l.head = append(l.head, make([]int32, d)...)
		l.tail = append(l.tail, make([]int32, d)...)
	}
}

// add appends r to slot s's list.
func (l *refLists) add(s int32, r ref) {
	var x int32 // the node, +1
	if l.free != 0 {
		x = l.free
		l.free = l.next[x-1]
		l.next[x-1], l.refs[x-1] = 0, r
	} else {
		l.next, l.refs = append(l.next, 0), append(l.refs, r)
		x = int32(len(l.refs))
	}
	if t := l.tail[s]; t != 0 {
		l.next[t-1] = x
	} else {
		l.head[s] = x
	}
	l.tail[s] = x
	l.n++
}

// appendTo appends slot s's rows to dst, in their order.
func (l *refLists) appendTo(dst []ref, s int32) []ref {
	for x := l.head[s]; x != 0; x = l.next[x-1] {
		dst = append(dst, l.refs[x-1])
	}
	return dst
}

// clear empties slot s's list, its nodes let go.
func (l *refLists) clear(s int32) {
	if l.head[s] == 0 {
		return
	}
	for x := l.head[s]; x != 0; {
		nx := l.next[x-1]
		l.next[x-1] = l.free
		l.free = x
		l.n--
		x = nx
	}
	l.head[s], l.tail[s] = 0, 0
}

// bytes is about the memory of the lists.
func (l *refLists) bytes() int64 {
	return 4*int64(cap(l.head)+cap(l.tail)+cap(l.next)) + 8*int64(cap(l.refs))
}
