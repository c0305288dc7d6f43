package master

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
)

// TestGoldenSupervisor feeds a Supervisor the observations of
// testdata/supervisor.txt (each at a made-up time since t0: probes
// answered, exits, recoveries, the runtime's listing, restarts carried
// out) and compares its decisions (which instance to restart, why, how
// long until it may be restarted again, crash loops) and its view of the
// instances with testdata/supervisor.golden. Rewrite it with -update after
// a change meant to alter the decisions.
func TestGoldenSupervisor(t *testing.T) {
	var s *Supervisor
	policy := DefaultPolicy
	testkit.GoldenScript(t, "supervisor.txt", "supervisor.golden", func(w io.Writer, c testkit.Command) error {
		switch c.Args[0] {
		case "policy":
			return scriptPolicy(&policy, c.Args[1:])
		case "watch":
			s = NewSupervisor(policy, c.Args[1:], t0)
			return nil
		}
		if s == nil {
			return fmt.Errorf("watch the instances first")
		}
		d, err := time.ParseDuration(c.Args[0])
		if err != nil || len(c.Args) < 2 {
			return fmt.Errorf("want TIME COMMAND ARGS..., TIME as 1.5s: %v", err)
		}
		return observe(w, s, t0.Add(d), c.Args[1], c.Args[2:])
	})
}

// scriptPolicy sets the fields of p that args name ("timeout=2s").
func scriptPolicy(p *Policy, args []string) error {
	for _, a := range args {
		name, value, _ := strings.Cut(a, "=")
		if name == "loop" {
			if _, err := fmt.Sscan(value, &p.LoopRestarts); err != nil {
				return fmt.Errorf("%s: %w", a, err)
			}
			continue
		}
		fields := map[string]*time.Duration{"timeout": &p.Timeout, "first": &p.FirstBackoff, "max": &p.MaxBackoff, "stable": &p.Stable, "window": &p.LoopWindow, "grace": &p.RecoveryGrace}
		f, ok := fields[name]
		if !ok {
			return fmt.Errorf("no policy field %q", name)
		}
		d, err := time.ParseDuration(value)
		if err != nil {
			return err
		}
		*f = d
	}
	return nil
}

// observe gives s one observation at now, or asks it what is due.
func observe(w io.Writer, s *Supervisor, now time.Time, verb string, args []string) error {
	switch verb {
	case "seen", "recovering", "started", "listed", "unlisted":
		if len(args) == 0 {
			return fmt.Errorf("%s names instances", verb)
		}
		for _, in := range args {
			switch verb {
			case "seen":
				s.Seen(in, now)
			case "recovering":
				s.Recovering(in, now)
			case "started":
				s.Started(in, now)
			default:
				s.Listed(in, verb == "listed", now)
			}
		}
	case "exited":
		if len(args) < 2 {
			return fmt.Errorf("exited INSTANCE HOW")
		}
		s.Exited(args[0], strings.Join(args[1:], " "))
	case "grace":
		s.Grace(now)
	case "due":
		actions := s.Due(now)
		if len(actions) == 0 {
			fmt.Fprintln(w, "nothing due")
		}
		for _, a := range actions {
			line := fmt.Sprintf("restart %s (%s): %s; not again before %s", a.Instance, a.Cause, a.Reason, since(s.inst[a.Instance].next))
			if a.KillFirst {
				line += "; kill it first"
			}
			if a.CrashLoop {
				line += "; CRASH LOOP"
			}
			fmt.Fprintln(w, line)
		}
	case "states":
		for _, st := range s.States(now) {
			var flags []string
			for _, f := range []struct {
				on   bool
				name string
			}{{st.Alive, "alive"}, {!st.Alive, "not alive"}, {st.Recovering, "recovering"}, {st.CrashLoop, "crash loop"}} {
				if f.on {
					flags = append(flags, f.name)
				}
			}
			fmt.Fprintf(w, "%s: %s, last seen %s, %d restarts\n", st.Instance, strings.Join(flags, ", "), since(st.LastSeen), st.Restarts)
		}
	default:
		return fmt.Errorf("unknown observation %q", verb)
	}
	return nil
}

// since is a time of the script, as the duration since t0.
func since(t time.Time) string { return t.Sub(t0).String() }
