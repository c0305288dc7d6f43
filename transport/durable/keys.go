package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/wololo/wololo/transport"
)

// Key layout (see doc.go). Two keyspaces:
//
//	m i                      last incarnation handed out (uint64 big-endian)
//	m t <job>                tombstone of a dropped job (empty value)
//	j <job> 0x00             job marker: the job exists (empty value)
//	j <job> 0x00 a <ch>      acked mark of an output channel
//	j <job> 0x00 c <name>    record
//	j <job> 0x00 o <ch> <seq> outbox entry (a wololov1.Batch)
//	j <job> 0x00 r <ch>      reserved: highest seq ever committed
//	j <job> 0x00 s <n>       state-log entry n (n counts up per job)
//	j <job> 0x00 w <ch>      inbox watermark of an input channel
//
// <ch> is Job 0x00 Stream 0x00 Sender 0x00 Receiver 0x00, so it is
// prefix-free; <seq> and <n> are 8 bytes big-endian so that entries sort in
// sequence order. Since no job id contains a NUL byte, "j <job> 0x00" is a
// prefix of the keys of that job only, and [j <job> 0x00, j <job> 0x01) is
// exactly the job's keys: DropJob is one DeleteRange.
const (
	spaceMeta = 'm'
	spaceJob  = 'j'

	metaIncarnation = 'i'
	metaTombstone   = 't'

	kindAcked     = 'a'
	kindRecord    = 'c'
	kindOutbox    = 'o'
	kindReserved  = 'r'
	kindState     = 's'
	kindWatermark = 'w'
)

var errNUL = errors.New("contains a NUL byte")

func checkJob(job string) error {
	if strings.IndexByte(job, 0) >= 0 {
		return fmt.Errorf("job id %q %w", job, errNUL)
	}
	return nil
}

func checkChannel(ch transport.ChannelID) error {
	for _, s := range [...]string{ch.Job, ch.Stream, ch.Sender, ch.Receiver} {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("channel %q %w", ch.String(), errNUL)
		}
	}
	return nil
}

var incarnationKey = []byte{spaceMeta, metaIncarnation}

func tombstoneKey(job string) []byte {
	return append([]byte{spaceMeta, metaTombstone}, job...)
}

// jobPrefix is the job marker key and the prefix of all the job's keys.
func jobPrefix(job string) []byte {
	k := make([]byte, 0, len(job)+32)
	k = append(k, spaceJob)
	k = append(k, job...)
	return append(k, 0)
}

// jobEnd is the exclusive upper bound of the job's keys.
func jobEnd(job string) []byte {
	k := jobPrefix(job)
	k[len(k)-1] = 1
	return k
}

func appendChannel(k []byte, ch transport.ChannelID) []byte {
	for _, s := range [...]string{ch.Job, ch.Stream, ch.Sender, ch.Receiver} {
		k = append(k, s...)
		k = append(k, 0)
	}
	return k
}

func channelKey(job string, kind byte, ch transport.ChannelID) []byte {
	return appendChannel(append(jobPrefix(job), kind), ch)
}

func outboxKey(job string, ch transport.ChannelID, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(channelKey(job, kindOutbox, ch), seq)
}

// outboxEnd is the exclusive upper bound of the channel's entries with
// seq at most upTo.
func outboxEnd(job string, ch transport.ChannelID, upTo uint64) []byte {
	if upTo == math.MaxUint64 {
		k := channelKey(job, kindOutbox, ch)
		k[len(k)-1] = 1 // just past the channel's terminating NUL
		return k
	}
	return outboxKey(job, ch, upTo+1)
}

func recordKey(job, name string) []byte {
	return append(append(jobPrefix(job), kindRecord), name...)
}

func stateKey(job string, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(jobPrefix(job), kindState), n)
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func parseU64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("bad uint64 value of %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// jobKey is a parsed key of the job keyspace.
type jobKey struct {
	job  string
	kind byte // 0 for the job marker
	ch   transport.ChannelID
	name string // record name
	n    uint64 // outbox seq or state-log index
}

// parseJobKey parses a key that starts with spaceJob.
func parseJobKey(k []byte) (jobKey, error) {
	var p jobKey
	rest := k[1:]
	i := indexNUL(rest)
	if i < 0 {
		return p, fmt.Errorf("bad job key %q", k)
	}
	p.job, rest = string(rest[:i]), rest[i+1:]
	if len(rest) == 0 {
		return p, nil // marker
	}
	p.kind, rest = rest[0], rest[1:]
	switch p.kind {
	case kindRecord:
		p.name = string(rest)
		return p, nil
	case kindState:
		if len(rest) != 8 {
			return p, fmt.Errorf("bad state key %q", k)
		}
		p.n = binary.BigEndian.Uint64(rest)
		return p, nil
	case kindAcked, kindOutbox, kindReserved, kindWatermark:
		var parts [4]string
		for j := range parts {
			i := indexNUL(rest)
			if i < 0 {
				return p, fmt.Errorf("bad channel key %q", k)
			}
			parts[j], rest = string(rest[:i]), rest[i+1:]
		}
		p.ch = transport.ChannelID{Job: parts[0], Stream: parts[1], Sender: parts[2], Receiver: parts[3]}
		if p.kind == kindOutbox {
			if len(rest) != 8 {
				return p, fmt.Errorf("bad outbox key %q", k)
			}
			p.n = binary.BigEndian.Uint64(rest)
		} else if len(rest) != 0 {
			return p, fmt.Errorf("bad channel key %q", k)
		}
		return p, nil
	}
	return p, fmt.Errorf("unknown key kind %q in %q", p.kind, k)
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
