package client

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// `client watch --answers`: a standing job's versions as they are
// published, each as its change from the one before, in the shape of
// Materialize's SUBSCRIBE (mz_timestamp, mz_diff, the row): one line per
// changed row, its epoch, its query, its count (+n: n more copies of the
// row, -n: n fewer), then the row as CSV. With --json one object per row:
// {"epoch":2,"query":"q2","diff":-1,"columns":[...],"row":[...]}.

// AnswerChange is one changed row of a version, as --json prints it.
type AnswerChange struct {
	Epoch   int64    `json:"epoch"`
	Query   string   `json:"query"`
	Diff    int64    `json:"diff"`
	Columns []string `json:"columns"`
	Row     []string `json:"row"`
}

// answersHeader is the first line of the text form.
const answersHeader = "epoch query diff row"

// changeRows reads a query's change (its CSV: the query's columns then
// diff) as the changed rows.
func changeRows(epoch int64, query string, data []byte) ([]AnswerChange, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("the change of %s in epoch %d: %w", query, epoch, err)
	}
	if len(records) == 0 {
		return nil, nil
	}
	header := records[0]
	if n := len(header); n == 0 || header[n-1] != "diff" {
		return nil, fmt.Errorf("the change of %s in epoch %d: a header without its diff column: %q", query, epoch, header)
	}
	cols := header[:len(header)-1]
	var out []AnswerChange
	for _, rec := range records[1:] {
		if len(rec) != len(header) {
			return nil, fmt.Errorf("the change of %s in epoch %d: a row of %d fields under a header of %d", query, epoch, len(rec), len(header))
		}
		diff, err := strconv.ParseInt(rec[len(rec)-1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the change of %s in epoch %d: diff %q: %w", query, epoch, rec[len(rec)-1], err)
		}
		out = append(out, AnswerChange{Epoch: epoch, Query: query, Diff: diff, Columns: cols, Row: rec[:len(rec)-1]})
	}
	return out, nil
}

// line is the change as the text form prints it.
func (c AnswerChange) line() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(c.Row) // a strings.Builder takes every write
	w.Flush()
	return fmt.Sprintf("%d %s %+d %s", c.Epoch, c.Query, c.Diff, strings.TrimSuffix(b.String(), "\n"))
}

// WatchAnswers follows the standing job id's versions from epoch from on
// (0: the first), calling fn with each epoch's changed rows once the
// epoch is whole, until the job is closed and its last version given
// (nil) or the stream fails.
func (s *Session) WatchAnswers(ctx context.Context, id string, from int64, fn func(epoch int64, rows []AnswerChange) error) error {
	next := max(from, 1)
	opened := false
	// fn's own error ends the watch as it is: it is no broken stream
	// (status.Code reads it as Unknown, which a stream's break retries).
	var stopped error
	return callRetry.Do(ctx, func(err error) bool { return stopped == nil && opened && retryable(err) }, func(ctx context.Context) error {
		opened = false
		if err := s.ready(ctx); err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // a watch that fn ends ends its stream
		stream, err := s.Jobs.WatchAnswers(ctx, &wololov1.WatchAnswersRequest{JobId: id, FromEpoch: next}, grpc.WaitForReady(true))
		if err != nil {
			return err
		}
		opened = true
		pieces := map[string][]byte{}
		var order []string
		for {
			r, err := stream.Recv()
			if err != nil {
				return err // io.EOF before closed too: the stream broke
			}
			switch {
			case r.Closed:
				return nil
			case r.EndOfEpoch:
				var rows []AnswerChange
				for _, q := range order {
					got, err := changeRows(r.Epoch, q, pieces[q])
					if err != nil {
						return err
					}
					rows = append(rows, got...)
				}
				if err := fn(r.Epoch, rows); err != nil {
					stopped = err
					return err
				}
				next, pieces, order = r.Epoch+1, map[string][]byte{}, nil
			default:
				if _, seen := pieces[r.Query]; !seen {
					order = append(order, r.Query)
				}
				pieces[r.Query] = append(pieces[r.Query], r.Data...)
			}
		}
	})
}

// printAnswers is the fn of WatchAnswers that prints the rows to w, as
// text (the header first) or one JSON object each.
func printAnswers(w io.Writer, asJSON bool) func(int64, []AnswerChange) error {
	headed := asJSON
	return func(_ int64, rows []AnswerChange) error {
		if !headed {
			headed = true
			if _, err := fmt.Fprintln(w, answersHeader); err != nil {
				return err
			}
		}
		for _, c := range rows {
			var err error
			if asJSON {
				err = WriteJSON(w, c)
			} else {
				_, err = fmt.Fprintln(w, c.line())
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// A Follower follows a standing job's versions from the job's creation
// on, as WatchAnswers gives them: its Created is a SubmitOptions.Created
// (the first call starts the watch, from epoch 1), and Wait waits for
// the watch's end (the job closed and its last version given, fn's own
// error, or the watch's ctx ended). What `wololo local run` prints its
// version lines with, and what `wololo bench` times a first version by.
type Follower struct {
	ctx  context.Context
	gw   *Session
	fn   func(epoch int64, rows []AnswerChange) error
	once sync.Once
	done chan struct{}
	err  error // the watch's; read after done
}

// Follow is a Follower calling fn with each version's changed rows,
// through gw, until ctx ends.
func Follow(ctx context.Context, gw *Session, fn func(epoch int64, rows []AnswerChange) error) *Follower {
	return &Follower{ctx: ctx, gw: gw, fn: fn, done: make(chan struct{})}
}

// Created starts following job id (the first call only: a lost job
// created again keeps its id).
func (f *Follower) Created(id string) {
	f.once.Do(func() {
		go func() {
			defer close(f.done)
			f.err = f.gw.WatchAnswers(f.ctx, id, 1, f.fn)
		}()
	})
}

// Wait returns the watch's error once it has ended, or ctx's.
func (f *Follower) Wait(ctx context.Context) error {
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
