package gateway

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// A standing job's retained epochs (Config.Inputs, services/base/inputlog):
// the gateway keeps a copy of every epoch's files, as it keeps a batch
// job's input, for as long as the job is not over, so that a one-off
// query (oneoff.go) reads the rows appended so far without the client.
// Epoch 1's files are named by their index, as a batch job's are
// (inputName); epoch K's from 2 "K.I". Beside them, each epoch's headers
// as its create or append declared them (an EpochRecord's files, the
// note "K.files"): the copy holds no header (inputlog never writes the
// bytes before a file's first record), the job keeps in memory only the
// columns its own plan reads, and a query of other columns needs every
// epoch's. What it costs is docs/operations.md's "Retained input": 1.0x
// the bytes appended, within the job's byte quota (--max-job-bytes,
// counted over all its appends), until the job is over.

// retainedName is the name of the retained copy of the input of index
// file among epoch's files: its index for a batch job's (epoch 0) and for
// a standing job's epoch 1, "K.I" for epoch K from 2.
func retainedName(epoch int64, file int) string {
	if epoch <= 1 {
		return inputName(file)
	}
	return strconv.FormatInt(epoch, 10) + "." + strconv.Itoa(file)
}

// headersNote is the note that keeps epoch's headers.
func headersNote(epoch int64) string { return strconv.FormatInt(max(epoch, 1), 10) + ".files" }

// retainHeaders keeps, beside a standing job's retained input, the
// headers of its epoch's files. Without them the epoch's copy cannot be
// read back (a one-off query says so): a failure here is logged, and the
// job goes on.
func (js *jobs) retainHeaders(j *job, epoch int64, files []*wololov1.FileRecord) {
	if js.inputs == nil || j.standing == nil {
		return
	}
	b, err := proto.Marshal(&wololov1.EpochRecord{Files: files})
	if err == nil {
		err = js.inputs.PutNote(j.id, headersNote(epoch), b)
	}
	if err != nil {
		j.log.Error("could not keep the epoch's headers beside its retained input; one-off queries of the job will fail", "epoch", epoch, "error", err)
	}
}

// retainedHeaders reads back epoch's headers, one per input of the job.
func (js *jobs) retainedHeaders(j *job, epoch int64) ([]*wololov1.FileRecord, error) {
	b, err := js.inputs.Note(j.id, headersNote(epoch))
	var rec wololov1.EpochRecord
	if err == nil {
		err = proto.Unmarshal(b, &rec)
	}
	if err == nil && len(rec.Files) != len(j.files) {
		err = fmt.Errorf("%d headers for the job's %d inputs", len(rec.Files), len(j.files))
	}
	if err != nil {
		return nil, errorf(ErrNotStanding, "job %q: the gateway holds no headers of epoch %d's files beside its retained input (%v)", j.name, epoch, err)
	}
	return rec.Files, nil
}

// epochInputs are the files of one epoch of a job: j.files for a batch
// job (epoch 0) and a standing job's epoch 1, an append's after.
type epochInputs struct {
	epoch int64
	files []*fileState
}

// epochs are the job's files by epoch, in order: a batch job's one list
// (epoch 0), a standing job's every epoch so far.
func (j *job) epochs() []epochInputs {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.epochsLocked()
}

// epochsLocked is epochs with j.mu held.
func (j *job) epochsLocked() []epochInputs {
	if j.standing == nil {
		return []epochInputs{{0, j.files}}
	}
	out := make([]epochInputs, 0, j.standing.appendCount())
	for k := int64(1); k <= j.standing.appendCount(); k++ {
		out = append(out, epochInputs{k, j.epochFiles(k)})
	}
	return out
}
