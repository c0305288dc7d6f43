package client

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// JobReport is a job as `wololo client status --json` prints it: one JSON
// object, the same facts as the text form.
type JobReport struct {
	JobID          string           `json:"job_id"`
	State          string           `json:"state"` // uploading, running, done, failed; unknown if never seen
	Message        string           `json:"message,omitempty"`
	ElapsedSeconds float64          `json:"elapsed_seconds"`
	Inputs         []InputReport    `json:"inputs"`
	ResultRows     map[string]int64 `json:"result_rows,omitempty"` // q1.csv .. q4.csv (NAME.csv of each query), once done
	Queries        []string         `json:"queries,omitempty"`     // the names of the job's queries, in order
	// While it runs: its channels whose receivers have not acknowledged
	// their batches since their links' last attempt failed.
	FailingChannels []ChannelReport `json:"failing_channels,omitempty"`
	// A standing job's (docs/standing.md): whether it takes appends
	// still, its epochs, those whose input is committed whole, and those
	// whose version is out.
	Standing        bool  `json:"standing,omitempty"`
	Open            bool  `json:"open,omitempty"`
	Epochs          int64 `json:"epochs,omitempty"`
	EpochsCommitted int64 `json:"epochs_committed,omitempty"`
	EpochsPublished int64 `json:"epochs_published,omitempty"`
}

// ChannelReport is one channel of a job with batches its receiver has not
// acknowledged.
type ChannelReport struct {
	Stream         string `json:"stream"`
	Sender         string `json:"sender"`
	Receiver       string `json:"receiver"`
	Unacknowledged int64  `json:"unacknowledged"` // batches
	Connected      bool   `json:"connected"`
	LastError      string `json:"last_error,omitempty"`
}

// InputReport is one input file of a job.
type InputReport struct {
	File          string           `json:"file"`
	SizeBytes     int64            `json:"size_bytes"`
	UploadedBytes int64            `json:"uploaded_bytes"` // committed by the gateway
	Uploaded      bool             `json:"uploaded"`       // the whole file is in
	Rows          int64            `json:"rows"`           // data rows read, malformed included
	Malformed     int64            `json:"malformed"`      // skipped
	Missing       map[string]int64 `json:"missing,omitempty"`
	OversizedAt   []int64          `json:"oversized_at,omitempty"` // byte offsets of records over the size limit
}

// SubmitReport is the final report of `wololo client submit --json`: the
// job as JobReport, what was written where, and how long it took. After a
// failure it has Error and, for a job left at the gateway, Hint: the
// command that picks it up again.
type SubmitReport struct {
	JobReport
	Outputs       []OutputReport `json:"outputs"`
	UploadedBytes int64          `json:"uploaded_bytes"` // its files and tables, by this run
	UploadSeconds float64        `json:"upload_seconds"`
	TotalSeconds  float64        `json:"total_seconds"`
	Rejects       string         `json:"rejects,omitempty"`  // rejects.csv written, if any malformed record was listed
	Explain       string         `json:"explain,omitempty"`  // the plans of the job's queries, with --explain
	Rebuilds      []string       `json:"rebuilds,omitempty"` // why the job was lost, each time it was submitted again
	Epoch         int64          `json:"epoch,omitempty"`    // a standing job's: the epoch whose version outputs are
	Error         string         `json:"error,omitempty"`
	Hint          string         `json:"hint,omitempty"`
}

// OutputReport is one result file written.
type OutputReport struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Rows  int64  `json:"rows"` // data rows, header excluded
	Bytes int64  `json:"bytes"`
}

// InputReports are a job's reports of its inputs: the two files, then its
// extra tables (Job.tables, FileReport.file their names), in order; a
// report the gateway did not send is nil.
func InputReports(job *wololov1.Job) []*wololov1.FileReport {
	return append([]*wololov1.FileReport{job.GetMatches(), job.GetPlayers()}, job.GetTables()...)
}

// NewJobReport describes job (nil: State "unknown").
func NewJobReport(id string, job *wololov1.Job) JobReport {
	r := JobReport{JobID: id, State: "unknown", Inputs: []InputReport{}}
	if job == nil {
		return r
	}
	r.JobID, r.State, r.Message, r.ElapsedSeconds = job.JobId, StateWord(job.State), job.Message, job.ElapsedSeconds
	for _, f := range InputReports(job) {
		if f == nil {
			continue
		}
		r.Inputs = append(r.Inputs, InputReport{File: f.File, SizeBytes: f.Size, UploadedBytes: f.Offset, Uploaded: f.Done,
			Rows: f.Rows, Malformed: f.Malformed, Missing: f.Missing, OversizedAt: f.OversizedAt})
	}
	if len(job.ResultRows) > 0 {
		r.ResultRows = job.ResultRows
	}
	r.Queries = job.Queries
	r.Standing, r.Open, r.Epochs, r.EpochsCommitted, r.EpochsPublished = job.Standing, job.Open, job.Epochs, job.EpochsCommitted, job.EpochsPublished
	for _, b := range failingChannels(job) {
		r.FailingChannels = append(r.FailingChannels, ChannelReport{Stream: b.Stream, Sender: b.Sender, Receiver: b.Receiver,
			Unacknowledged: b.Unacknowledged, Connected: b.Connected, LastError: b.LastError})
	}
	return r
}

// NewSubmitReport describes what Submit returned: sum and err.
func NewSubmitReport(sum *Summary, err error) SubmitReport {
	r := SubmitReport{JobReport: NewJobReport(sum.JobID, sum.Job), Outputs: []OutputReport{}, UploadedBytes: sum.Uploaded,
		UploadSeconds: sum.Upload.Seconds(), TotalSeconds: sum.Total.Seconds(), Rejects: sum.Rejects, Explain: sum.Explain, Rebuilds: sum.Rebuilds, Epoch: sum.Epoch}
	for _, name := range ResultFiles(sum.Job) {
		path, ok := sum.Files[name]
		if !ok {
			continue
		}
		out := OutputReport{Name: name, Path: path}
		if sum.Job != nil {
			out.Rows = sum.Job.ResultRows[name]
		}
		if info, err := os.Stat(path); err == nil {
			out.Bytes = info.Size()
		}
		r.Outputs = append(r.Outputs, out)
	}
	if err != nil {
		r.Error = err.Error()
		var hinted cli.Hinted
		if errors.As(err, &hinted) {
			r.Hint = hinted.Hint()
			r.Error = strings.TrimSuffix(r.Error, "; "+r.Hint)
		}
	}
	return r
}

// WriteJSON writes v as one JSON object and a newline.
func WriteJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
