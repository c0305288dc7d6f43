package operators

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// fixedSeedTable returns an empty table whose hash seed is seed, so that
// tests can pick tokens by their slots.
func fixedSeedTable[V any](hint int, seed uint64) *flatTable[V] {
	t := newFlatTable[V](hint)
	t.seed = seed
	return t
}

// checkTable compares the whole table with a model: the count, each's
// entries (each once), and find of every model token.
func checkTable(t *testing.T, tab *flatTable[uint64], model map[string]uint64) {
	t.Helper()
	if tab.len() != len(model) {
		t.Fatalf("len %d, model has %d", tab.len(), len(model))
	}
	seen := map[string]bool{}
	tab.each(func(token []byte, v *uint64) {
		k := string(token)
		if seen[k] {
			t.Fatalf("each passed %q twice", token)
		}
		seen[k] = true
		if want, ok := model[k]; !ok || *v != want {
			t.Fatalf("each passed %q = %d, model has %d (present %v)", token, *v, want, ok)
		}
	})
	if len(seen) != len(model) {
		t.Fatalf("each passed %d entries, model has %d", len(seen), len(model))
	}
	for k, want := range model {
		if v, ok := tab.find([]byte(k)); !ok || *v != want {
			t.Fatalf("find(%q) = %v, want %d", k, ok, want)
		}
	}
}

func TestFlatTableSlotAndFind(t *testing.T) {
	tab := newFlatTable[uint64](0)
	tokens := []string{"m", "", "m\x00", "\x00", "\x00\x00", "M", strings.Repeat("x", 23), strings.Repeat("x", 24), strings.Repeat("L", 5000)}
	model := map[string]uint64{}
	for round := range 3 {
		for i, k := range tokens {
			v, found := tab.slot([]byte(k))
			if found != (round > 0) {
				t.Fatalf("round %d: slot(%q) found=%v", round, k, found)
			}
			*v += uint64(i + 1)
			model[k] += uint64(i + 1)
		}
		checkTable(t, tab, model)
	}
	for _, k := range []string{"mm", "x", strings.Repeat("x", 25), strings.Repeat("L", 4999)} {
		if _, ok := tab.find([]byte(k)); ok {
			t.Errorf("find(%q) found an absent token", k)
		}
	}
	checkTable(t, tab, model)
}

func TestFlatTableGrowsKeepingEntries(t *testing.T) {
	tab := newFlatTable[uint64](0)
	model := map[string]uint64{}
	for i := range 20000 {
		k := fmt.Sprintf("match-%d", i%15000)
		v, _ := tab.slot([]byte(k))
		*v = *v*31 + uint64(i)
		model[k] = model[k]*31 + uint64(i)
		if tab.count > flatLimit(len(tab.entries)) {
			t.Fatalf("%d entries in %d slots", tab.count, len(tab.entries))
		}
	}
	checkTable(t, tab, model)
	if n := len(tab.entries); n&(n-1) != 0 {
		t.Errorf("%d slots, not a power of two", n)
	}
}

func TestFlatTableHintAvoidsGrowth(t *testing.T) {
	for _, hint := range []int{-1, 0, 1, 6, 7, 1000, 1 << 16} {
		tab := newFlatTable[uint64](hint)
		slots, arena := len(tab.entries), cap(tab.arena)
		r := rand.New(rand.NewPCG(1, uint64(hint+2)))
		var token []byte
		for i := range max(hint, 0) {
			token = benchToken(token[:0], uint64(i), r)
			tab.slot(token)
		}
		if len(tab.entries) != slots || cap(tab.arena) != arena {
			t.Errorf("hint %d: %d entries grew the slots %d → %d, arena %d → %d", hint, hint, slots, len(tab.entries), arena, cap(tab.arena))
		}
	}
}

// TestFlatEntrySizes pins the bytes per slot of the operators' tables: at
// full scale the grouper has 4M slots, so each byte is 4 MB.
func TestFlatEntrySizes(t *testing.T) {
	if n := unsafe.Sizeof(flatEntry[struct{}]{}); n != 16 {
		t.Errorf("a joiner's slot takes %d bytes, want 16", n)
	}
	if n := unsafe.Sizeof(flatEntry[q2Match]{}); n != 40 {
		t.Errorf("a grouper's slot takes %d bytes, want 40", n)
	}
}

// tokensInSlot returns n distinct tokens whose home slot in tab is slot.
func tokensInSlot(tab *flatTable[uint64], slot uint32, n int) [][]byte {
	var out [][]byte
	for i := 0; len(out) < n; i++ {
		k := []byte(fmt.Sprint("t", i))
		if tab.hash(k)&tab.mask == slot {
			out = append(out, k)
		}
	}
	return out
}

func TestFlatTableProbeWrapsAround(t *testing.T) {
	tab := fixedSeedTable[uint64](0, 42)
	last := uint32(len(tab.entries) - 1)
	model := map[string]uint64{}
	for i, k := range tokensInSlot(tab, last, 4) {
		v, _ := tab.slot(k)
		*v = uint64(i + 1)
		model[string(k)] = uint64(i + 1)
	}
	if len(tab.entries) != flatMinSlots {
		t.Fatalf("the table grew to %d slots", len(tab.entries))
	}
	for i := range uint32(3) {
		if tab.entries[i].hash == 0 {
			t.Errorf("slot %d is empty: the probe did not wrap around", i)
		}
	}
	checkTable(t, tab, model)
}

func TestFlatTableEqualHashesDifferentTokens(t *testing.T) {
	tab := fixedSeedTable[uint64](0, 7)
	byHash := map[uint32][]byte{}
	var a, b []byte
	for i := 0; a == nil; i++ {
		k := []byte(fmt.Sprint("token-", i))
		h := tab.hash(k)
		if prev, ok := byHash[h]; ok {
			a, b = prev, k
		}
		byHash[h] = k
	}
	va, _ := tab.slot(a)
	*va = 1
	vb, found := tab.slot(b)
	if found {
		t.Fatalf("%q was found in %q's slot (same hash)", b, a)
	}
	*vb = 2
	checkTable(t, tab, map[string]uint64{string(a): 1, string(b): 2})
}

func TestFlatTableCopiesTokens(t *testing.T) {
	tab := newFlatTable[uint64](0)
	k := []byte("abc")
	tab.slot(k)
	tab.slot([]byte("def"))
	copy(k, "zzz")
	checkTable(t, tab, map[string]uint64{"abc": 0, "def": 0})
	tab.each(func(token []byte, _ *uint64) {
		_ = append(token, '!') // must not write over the next token
	})
	checkTable(t, tab, map[string]uint64{"abc": 0, "def": 0})
}

func TestFlatTableEachUpdatesInPlace(t *testing.T) {
	tab := newFlatTable[uint64](0)
	model := map[string]uint64{}
	for i := range 100 {
		k := fmt.Sprint(i)
		tab.slot([]byte(k))
		model[k] = uint64(i) * 2
	}
	tab.each(func(token []byte, v *uint64) {
		var n uint64
		fmt.Sscan(string(token), &n)
		*v = n * 2
	})
	checkTable(t, tab, model)
}

func TestHashTokenReadsEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 41 {
		token := make([]byte, n)
		for i := range token {
			token[i] = byte(r.Uint32())
		}
		h := hashToken(5, token)
		for i := range token {
			for bit := range 8 {
				token[i] ^= 1 << bit
				if hashToken(5, token) == h {
					t.Errorf("length %d: flipping bit %d of byte %d leaves the hash", n, bit, i)
				}
				token[i] ^= 1 << bit
			}
		}
		if hashToken(5, append(token, 0)) == h {
			t.Errorf("length %d: a trailing NUL leaves the hash", n)
		}
		if hashToken(6, token) == h {
			t.Errorf("length %d: the seed does not change the hash", n)
		}
	}
}

// TestFlatTableProbesStayShort fills tables to just under their limit with
// structured tokens (sequential numbers, one varying byte among many equal
// ones) and checks the mean distance of an entry from its home slot: a
// hash that mixes badly makes long clusters.
func TestFlatTableProbesStayShort(t *testing.T) {
	sets := map[string]func(i int) []byte{
		"decimal":    func(i int) []byte { return []byte(fmt.Sprint(i)) },
		"prefixed":   func(i int) []byte { return []byte(fmt.Sprintf("match-%010d", i)) },
		"binary":     func(i int) []byte { return []byte{byte(i), byte(i >> 8), byte(i >> 16)} },
		"long equal": func(i int) []byte { return fmt.Appendf(bytes.Repeat([]byte{'a'}, 40), "%d", i) },
	}
	// Every table has a seed of its own: before hashToken's final mix,
	// about one seed in forty clustered one of these sets, so one table
	// per set passed most runs and failed now and then.
	seeds := 24
	if testing.Short() {
		seeds = 4
	}
	// Seeds that clustered a set under the hash without its final mix
	// (decimal 3.54, long equal 12.72), kept as fixed cases.
	fixed := []uint64{0x13ddc3b10095daa5, 0x4a1857fcba0bc851}
	for name, token := range sets {
		for k := range len(fixed) + seeds {
			tab := newFlatTable[uint64](0)
			if k < len(fixed) {
				tab.seed = fixed[k]
			}
			n := flatLimit(1<<17) - 1
			for i := range n {
				tab.slot(token(i))
			}
			var dist uint64
			for i, e := range tab.entries {
				if e.hash != 0 {
					dist += uint64((uint32(i) - e.hash) & tab.mask)
				}
			}
			// Linear probing at 3/4 load averages 1.5 with a uniform hash.
			if mean := float64(dist) / float64(n); mean > 2 {
				t.Errorf("%s, seed %#x: mean distance from the home slot %.2f at load %.2f", name, tab.seed, mean, float64(n)/float64(len(tab.entries)))
			}
		}
	}
}

// FuzzFlatTable runs a sequence of operations on arbitrary tokens against
// a Go map. Each operation is a byte (0-1: slot and add, 2: find, 3: check
// the whole table) and, but for 3, a length byte and the token's bytes.
func FuzzFlatTable(f *testing.F) {
	f.Add(uint64(0), uint8(0), []byte{0, 1, 'a', 0, 1, 'a', 2, 1, 'a', 2, 0, 3})
	f.Add(uint64(1), uint8(3), []byte{0, 0, 1, 2, 'a', 0, 2, 'a', 0, 1, 2, 'a', 0, 2, 2, 'a', 0, 3})
	f.Add(uint64(2), uint8(9), bytes.Repeat([]byte{0, 3, 'x', 'y', 'z', 1, 2, 'x', 'y', 0, 1, 'x'}, 20))
	f.Add(uint64(3), uint8(0), append([]byte{0, 255}, bytes.Repeat([]byte{'L'}, 300)...))
	f.Fuzz(func(t *testing.T, seed uint64, hint uint8, ops []byte) {
		tab := fixedSeedTable[uint64](int(hint), seed)
		model := map[string]uint64{}
		for step := uint64(1); len(ops) > 0; step++ {
			op := ops[0] % 4
			ops = ops[1:]
			if op == 3 {
				checkTable(t, tab, model)
				continue
			}
			var token []byte
			token, ops = fuzzToken(ops)
			if op == 2 {
				v, ok := tab.find(token)
				want, wantOK := model[string(token)]
				if ok != wantOK || ok && *v != want {
					t.Fatalf("step %d: find(%q) = %v, want %d, %v", step, token, ok, want, wantOK)
				}
				continue
			}
			v, found := tab.slot(token)
			if _, ok := model[string(token)]; found != ok {
				t.Fatalf("step %d: slot(%q) found=%v, model has it: %v", step, token, found, ok)
			}
			*v += step
			model[string(token)] += step
		}
		checkTable(t, tab, model)
	})
}

// fuzzToken takes a token off ops: a length byte (under 32, else long:
// 32 + 8 × its excess) and that many bytes, or what is left.
func fuzzToken(ops []byte) (token, rest []byte) {
	if len(ops) == 0 {
		return nil, nil
	}
	n := int(ops[0])
	if n >= 32 {
		n = 32 + 8*(n-32)
	}
	ops = ops[1:]
	n = min(n, len(ops))
	return ops[:n], ops[n:]
}

// benchTokens returns n distinct 16-byte tokens.
func benchTokens(n int) [][]byte {
	r := rand.New(rand.NewPCG(5, 6))
	out := make([][]byte, n)
	for i := range out {
		out[i] = benchToken(nil, uint64(i), r)
	}
	return out
}

// BenchmarkTokenTable compares flatTable with the tokenMap it replaced,
// at 10K entries (in cache) and 1M (not): "upsert" inserts every token,
// then updates each once more, as the grouper does (a get and a put on
// tokenMap, a slot on flatTable); "find" looks every token up in a full
// table, in another order. ns/token is per operation.
func BenchmarkTokenTable(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		tokens := benchTokens(n)
		shuffled := append([][]byte(nil), tokens...)
		rand.New(rand.NewPCG(7, 8)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b.Run(fmt.Sprintf("flat/upsert/%d", n), func(b *testing.B) {
			for range b.N {
				tab := newFlatTable[uint64](0)
				for _, pass := range [][][]byte{tokens, shuffled} {
					for _, k := range pass {
						v, _ := tab.slot(k)
						*v++
					}
				}
			}
			perToken(b, 2*n)
		})
		b.Run(fmt.Sprintf("tokenMap/upsert/%d", n), func(b *testing.B) {
			for range b.N {
				m := newTokenMap[uint64]()
				for _, pass := range [][][]byte{tokens, shuffled} {
					for _, k := range pass {
						v, _ := m.get(k)
						m.put(k, v+1)
					}
				}
			}
			perToken(b, 2*n)
		})
		tab, m := newFlatTable[uint64](0), newTokenMap[uint64]()
		for _, k := range tokens {
			tab.slot(k)
			m.put(k, 0)
		}
		b.Run(fmt.Sprintf("flat/find/%d", n), func(b *testing.B) {
			for range b.N {
				for _, k := range shuffled {
					if _, ok := tab.find(k); !ok {
						b.Fatal("missing")
					}
				}
			}
			perToken(b, n)
		})
		b.Run(fmt.Sprintf("tokenMap/find/%d", n), func(b *testing.B) {
			for range b.N {
				for _, k := range shuffled {
					if _, ok := m.get(k); !ok {
						b.Fatal("missing")
					}
				}
			}
			perToken(b, n)
		})
	}
}

// perToken reports ns/token for ops operations per iteration.
func perToken(b *testing.B, ops int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/token")
}

var hashSink uint64

// BenchmarkHashToken compares hashToken with hash/maphash on tokens of 16
// bytes (a match token) and 64.
func BenchmarkHashToken(b *testing.B) {
	seed := maphash.MakeSeed()
	for _, n := range []int{16, 64} {
		token := bytes.Repeat([]byte{'k'}, n)
		b.Run(fmt.Sprintf("hashToken/%d", n), func(b *testing.B) {
			for i := range b.N {
				hashSink += hashToken(uint64(i), token)
			}
		})
		b.Run(fmt.Sprintf("maphash/%d", n), func(b *testing.B) {
			for range b.N {
				hashSink += maphash.Bytes(seed, token)
			}
		})
	}
}
