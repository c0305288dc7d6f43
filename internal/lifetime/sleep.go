package lifetime

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends (its error then): the one wait of
// the module that a context cuts short (a link's backoff, a retry's, a
// poll's), here because this leaf is the one every package may import.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
