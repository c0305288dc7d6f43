package gateway

import (
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
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
