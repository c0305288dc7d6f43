package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/cmdline/client"
)

// firstVersion follows a standing job from its creation until its first
// version is out: when that was, from a start.
type firstVersion struct {
	gw     *client.Session
	follow *client.Follower
	start  time.Time
	at     time.Duration
}

// errFirstOut ends the watch once version 1 is in.
var errFirstOut = errors.New("first version out")

// followFirstVersion sets so.Created to follow the job so makes, from
// its creation on, until its first version is out (ctx ending stops it).
func followFirstVersion(ctx context.Context, so *client.SubmitOptions, start time.Time) (*firstVersion, error) {
	gw, err := client.Open(so.Server, so.TLS, 0)
	if err != nil {
		return nil, err
	}
	f := &firstVersion{gw: gw, start: start}
	f.follow = client.Follow(ctx, gw, func(int64, []client.AnswerChange) error {
		f.at = time.Since(f.start)
		return errFirstOut
	})
	so.Created = f.follow.Created
	return f, nil
}

// addDefaultQueries adds the four default queries, as added_q1 ..
// added_q4, to the open standing job so.JobID (`client query --job ID
// --query NAME=F.sql`), and says how long they took to answer: the call
// returns once their version of the job's last epoch is out.
func addDefaultQueries(ctx context.Context, so client.SubmitOptions) (time.Duration, error) {
	var add []*wololov1.Query
	for _, name := range queries.Names {
		text, _ := queries.Text(name)
		add = append(add, &wololov1.Query{Name: "added_" + name, Sql: text})
	}
	gw, err := client.Open(so.Server, so.TLS, 0)
	if err != nil {
		return 0, err
	}
	defer gw.Close()
	start := time.Now()
	if _, err := gw.AddQueries(ctx, so.JobID, add); err != nil {
		return 0, fmt.Errorf("add the default queries to job %s: %w", so.JobID, err)
	}
	return time.Since(start), nil
}

// wait is when the first version was out, once it is known.
func (f *firstVersion) wait(ctx context.Context) (time.Duration, error) {
	if err := f.follow.Wait(ctx); !errors.Is(err, errFirstOut) {
		return 0, fmt.Errorf("follow the job to its first version: %w", err)
	}
	return f.at, nil
}
