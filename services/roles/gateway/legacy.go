package gateway

import (
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// Builds before the records moved to protobuf wrote them as JSON. A
// gateway restarted on such a store still reads them, so that an upgrade
// does not drop the jobs in flight; it writes protobuf from then on.

type legacyJob struct {
	Created int64 `json:"created_unix_ms"`
	Files   []struct {
		Columns    []string `json:"columns"`
		Size       int64    `json:"size"`
		DataOffset int64    `json:"data_offset"`
	} `json:"files"`
}

type legacyUpload struct {
	Offset int64 `json:"offset"`
	Done   bool  `json:"done"`
	Report struct {
		Rows, Malformed int64
		Missing         map[string]int64
	} `json:"report"`
}

// isJSON reports whether a record is one of the legacy JSON ones (protobuf
// records never start with '{': that byte would be field 15 as a group).
func isJSON(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// decodeJobRecord reads a job's description, protobuf or legacy JSON.
func decodeJobRecord(raw []byte) (*wololov1.JobRecord, error) {
	if !isJSON(raw) {
		var rec wololov1.JobRecord
		return &rec, proto.Unmarshal(raw, &rec)
	}
	var old legacyJob
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, err
	}
	rec := &wololov1.JobRecord{CreatedUnixMs: old.Created}
	for _, f := range old.Files {
		rec.Files = append(rec.Files, &wololov1.FileRecord{Columns: f.Columns, Size: f.Size, DataOffset: f.DataOffset})
	}
	if len(rec.Files) == 0 {
		return nil, errors.New("a job description without files")
	}
	return rec, nil
}

// decodeUploadRecord reads a file's upload progress, protobuf or legacy
// JSON.
func decodeUploadRecord(raw []byte) (*wololov1.UploadRecord, error) {
	if !isJSON(raw) {
		var rec wololov1.UploadRecord
		return &rec, proto.Unmarshal(raw, &rec)
	}
	var old legacyUpload
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, err
	}
	return &wololov1.UploadRecord{Offset: old.Offset, Done: old.Done, Rows: old.Report.Rows, Malformed: old.Report.Malformed, Missing: old.Report.Missing}, nil
}

// planDefault makes a record of a job of the hand-written graph (no
// queries: written by an older version, which ran the four default
// queries on it) a record of the default queries as SQL, planned on the
// job's two headers: what its rebuild runs (issue 39).
func (js *jobs) planDefault(rec *wololov1.JobRecord) error {
	if len(rec.Files) != len(schema.Files) {
		return fmt.Errorf("a job of the hand-written graph with %d inputs", len(rec.Files))
	}
	inputs := make([]inputHeader, len(schema.Files))
	for i, f := range schema.Files {
		inputs[i] = inputHeader{fileInput(f), &wololov1.FileHeader{Columns: rec.Files[i].Columns}}
	}
	jp, err := js.limits.planQueries(defaultQueries, false, inputs, js.shape, js.shapeErr)
	if err != nil {
		return err
	}
	rec.Queries, rec.Plan = jp.queries, jp.plan
	return nil
}
