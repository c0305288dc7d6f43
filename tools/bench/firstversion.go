package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wololo/wololo/services/cmdline/client"
)

// firstVersion follows a standing job from its creation until its first
// version is out: when that was, from a start.
type firstVersion struct {
	start time.Time
	at    time.Duration
	err   error
	done  chan struct{}
}

// errFirstOut ends the watch once version 1 is in.
var errFirstOut = errors.New("first version out")

// followFirstVersion sets so.Created to follow the job so makes, from
// its creation on, until its first version is out (ctx ending stops it).
func followFirstVersion(ctx context.Context, so *client.SubmitOptions, start time.Time) *firstVersion {
	f := &firstVersion{start: start, done: make(chan struct{})}
	var once sync.Once
	server, tlsConfig := so.Server, so.TLS
	so.Created = func(id string) {
		once.Do(func() {
			go func() {
				defer close(f.done)
				gw, err := client.Open(server, tlsConfig, 0)
				if err != nil {
					f.err = err
					return
				}
				defer gw.Close()
				err = gw.WatchAnswers(ctx, id, 1, func(epoch int64, _ []client.AnswerChange) error {
					f.at = time.Since(f.start)
					return errFirstOut
				})
				if !errors.Is(err, errFirstOut) {
					f.err = fmt.Errorf("follow job %s to its first version: %w", id, err)
				}
			}()
		})
	}
	return f
}

// wait is when the first version was out, once it is known.
func (f *firstVersion) wait(ctx context.Context) (time.Duration, error) {
	select {
	case <-f.done:
		return f.at, f.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
