package client

import (
	"context"
	"fmt"
	"io"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
)

// `client query --job ID --query NAME=F.sql`: queries added to an open
// standing job (QueryJobRequest.add), kept up like its own from the epoch
// they are added at; the call returns once their versions of the epochs
// so far are published (docs/standing.md, "Upload once, query many").

// AddQueries adds queries to the open standing job id and returns the
// epoch they were added at, once their version of it is published. A
// call that breaks is made again: the gateway takes the same queries
// added again as the same add.
func (s *Session) AddQueries(ctx context.Context, id string, queries []*wololov1.Query) (int64, error) {
	var at int64
	err := s.queryCall(ctx, &wololov1.QueryJobRequest{JobId: id, Add: queries}, func() {}, func(r *wololov1.QueryJobResponse) { at = r.Epochs })
	return at, err
}

// addQueries is `client query` with --query: it reads the queries' files
// and adds them to job id.
func addQueries(ctx context.Context, gw *Session, id string, given *sqlflags.QueryFlags, stdout io.Writer) error {
	read, err := given.Read()
	if err != nil {
		return err
	}
	var queries []*wololov1.Query
	for _, q := range read {
		queries = append(queries, &wololov1.Query{Name: q.Name, Sql: q.Text})
	}
	at, err := gw.AddQueries(ctx, id, queries)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %d %s to job %s at epoch %d; its versions are the job's from then on: `results --job %s --epoch %d`\n",
		len(queries), map[bool]string{true: "query", false: "queries"}[len(queries) == 1], id, at, id, at)
	return nil
}
