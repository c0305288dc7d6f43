package storetest

import (
	"bytes"
	"fmt"
	"slices"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// The commits of the stores' crash tests: a child process commits them in
// a loop and is killed, and the store it leaves must hold exactly a prefix
// of them. Both stores' crash tests use these, so they check the same
// thing.

const (
	// CrashOutputs is the outputs per commit.
	CrashOutputs = 3
	crashPayload = 2000 // bytes of rows per output
)

// Every commit i of job J writes values that all carry i: both input
// watermarks, one entry per output channel, the "last" record and the
// record "r<i%4>", and a state entry (a snapshot replacing the log every
// tenth commit). Every fifth commit is followed by a Trim of each output
// channel to i-3. CheckCrashJob can so tell whether a commit is all there.

// CrashInput is part of the crash commits (above).
func CrashInput(job string, k int) transport.ChannelID {
	return Ch(job, "in", fmt.Sprint("up", k), "me")
}

// CrashOutput is part of the crash commits (above).
func CrashOutput(job string, k int) transport.ChannelID {
	return Ch(job, "out", "me", fmt.Sprint("down", k))
}

// CrashRows is part of the crash commits (above).
func CrashRows(job string, i uint64, k int) []byte {
	tag := fmt.Sprintf("%s/%d/%d/", job, i, k)
	data := bytes.Repeat([]byte(tag), crashPayload/len(tag)+1)[:crashPayload]
	return encode(TextRows(&wololov1.TextColumn{Data: data, Ends: []uint32{uint32(len(data))}}))
}

// CrashState is part of the crash commits (above).
func CrashState(i uint64) []byte {
	if i%10 == 0 {
		return fmt.Appendf(nil, "snap %d", i)
	}
	return fmt.Append(nil, i)
}

// CrashCommit is part of the crash commits (above).
func CrashCommit(job string, i uint64) *transport.Commit {
	c := &transport.Commit{
		Job:        job,
		Inputs:     map[transport.ChannelID]uint64{CrashInput(job, 0): i, CrashInput(job, 1): i},
		Records:    map[string][]byte{"last": fmt.Append(nil, i), fmt.Sprint("r", i%4): fmt.Append(nil, i)},
		State:      CrashState(i),
		ResetState: i%10 == 0,
	}
	for k := range CrashOutputs {
		c.Outputs = append(c.Outputs, transport.Entry{Channel: CrashOutput(job, k), Seq: i, Rows: CrashRows(job, i, k)})
	}
	return c
}

// CrashLoop commits job's commits from..to (to 0: forever), calling
// report after each returns.
func CrashLoop(s transport.Store, job string, from, to uint64, report func(uint64)) error {
	for i := from; to == 0 || i <= to; i++ {
		if err := s.Commit(CrashCommit(job, i)); err != nil {
			return err
		}
		report(i)
		if i%5 == 0 && i > 3 {
			for k := range CrashOutputs {
				if err := s.Trim(CrashOutput(job, k), i-3); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// CheckCrashJob checks that job j holds exactly commits 1..n for some n
// (nothing of a commit after n, all of every commit up to n) and returns
// n. Trims may be lost (they are not synced), but never half of one.
func CheckCrashJob(id string, j *transport.JobImage) (uint64, error) {
	if j == nil {
		return 0, nil
	}
	n := j.Watermarks[CrashInput(id, 0)]
	fail := func(format string, args ...any) (uint64, error) {
		return n, fmt.Errorf("job %s at commit %d: %s", id, n, fmt.Sprintf(format, args...))
	}
	if n == 0 {
		if len(j.Watermarks)+len(j.Reserved)+len(j.Acked)+len(j.Outbox)+len(j.Records)+len(j.State) != 0 {
			return fail("no watermark but other values: %+v", j)
		}
		return 0, nil
	}
	if w := j.Watermarks[CrashInput(id, 1)]; w != n {
		return fail("second input watermark %d", w)
	}
	if len(j.Watermarks) != 2 {
		return fail("watermarks %v", j.Watermarks)
	}
	for k := range CrashOutputs {
		ch := CrashOutput(id, k)
		if r := j.Reserved[ch]; r != n {
			return fail("%s reserved %d", ch, r)
		}
		acked := j.Acked[ch]
		if acked >= n {
			return fail("%s acked %d", ch, acked)
		}
		q := j.Outbox[ch]
		if uint64(len(q)) != n-acked {
			return fail("%s holds %d entries, want %d..%d", ch, len(q), acked+1, n)
		}
		for x, e := range q {
			want := acked + 1 + uint64(x)
			if e.Seq != want || e.Channel != ch || e.EOF || !bytes.Equal(e.Rows, CrashRows(id, want, k)) {
				return fail("%s entry %d is seq %d (or its rows differ)", ch, x, e.Seq)
			}
		}
	}
	if string(j.Records["last"]) != fmt.Sprint(n) {
		return fail("record last = %q", j.Records["last"])
	}
	for m := range uint64(4) {
		name := fmt.Sprint("r", m)
		got, ok := j.Records[name]
		if n < m || (m == 0 && n < 4) {
			if ok {
				return fail("record %s = %q, want none", name, got)
			}
			continue
		}
		want := n - (n-m)%4
		if string(got) != fmt.Sprint(want) {
			return fail("record %s = %q, want %d", name, got, want)
		}
	}
	var want [][]byte
	start := n / 10 * 10
	if start == 0 {
		start = 1
	}
	for i := start; i <= n; i++ {
		want = append(want, CrashState(i))
	}
	if !slices.EqualFunc(j.State, want, bytes.Equal) {
		return fail("state log %q, want %q", j.State, want)
	}
	return n, nil
}
