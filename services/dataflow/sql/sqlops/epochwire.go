package sqlops

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// How a standing plan's channels travel as bytes (stage.Emitter's
// Encoded): a batch of changes is its epoch, as field 6 of a RowBatch (a
// varint), before the RowBatch's own bytes; an epoch marker is field 7
// alone: RowBatch's fields epoch and epoch_end
// (proto/wololo/v1/batch.proto). Protobuf reads fields in any order, so
// these are RowBatch messages as proto.Unmarshal reads them
// (TestEpochWireIsARowBatch); the wire codec reads what follows the
// epoch. The epoch is in
// every batch, not known from the order of arrival, because the runtime
// does not say which instance sent a batch: a shard ahead of another may
// send epoch k+1's changes before the other's marker of k.

// RowBatch.epoch and epoch_end (TestEpochWireIsARowBatch holds them to
// the message's).
const (
	epochField    protowire.Number = 6
	epochEndField protowire.Number = 7
)

// errEpochBytes is what DecodeEpoch's errors wrap.
var errEpochBytes = errors.New("sqlops: not a standing channel's batch")

// EncodeEpochRows appends to dst the bytes a batch of changes of epoch
// travels as: its epoch, then rowBatch (a RowBatch's bytes, as
// wire.Writer writes them).
func EncodeEpochRows(dst []byte, epoch int64, rowBatch []byte) []byte {
	return append(EncodeEpochHead(dst, epoch), rowBatch...)
}

// EncodeEpochHead appends to dst the epoch that a batch of changes of
// epoch begins with, which a wire.Writer then appends the RowBatch to:
// EncodeEpochRows, the RowBatch written in place rather than copied.
func EncodeEpochHead(dst []byte, epoch int64) []byte {
	dst = protowire.AppendTag(dst, epochField, protowire.VarintType)
	return protowire.AppendVarint(dst, uint64(epoch))
}

// EncodeEpochMarker appends to dst the bytes of the marker of epoch's
// end.
func EncodeEpochMarker(dst []byte, epoch int64) []byte {
	dst = protowire.AppendTag(dst, epochEndField, protowire.VarintType)
	return protowire.AppendVarint(dst, uint64(epoch))
}

// DecodeEpoch reads what EncodeEpochRows or EncodeEpochMarker wrote: the
// epoch, and the RowBatch's bytes after it, or marker true.
func DecodeEpoch(b []byte) (epoch int64, rowBatch []byte, marker bool, err error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || typ != protowire.VarintType || num != epochField && num != epochEndField {
		return 0, nil, false, fmt.Errorf("%w: no epoch first", errEpochBytes)
	}
	v, m := protowire.ConsumeVarint(b[n:])
	if m < 0 || v == 0 || v > 1<<62 {
		return 0, nil, false, fmt.Errorf("%w: epoch not a varint above 0", errEpochBytes)
	}
	rest := b[n+m:]
	if num == epochEndField {
		if len(rest) != 0 {
			return 0, nil, false, fmt.Errorf("%w: %d bytes after a marker", errEpochBytes, len(rest))
		}
		return int64(v), nil, true, nil
	}
	return int64(v), rest, false, nil
}
