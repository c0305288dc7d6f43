package deploy

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
)

// TestGoldenPlan plans the topologies of testdata/plan.txt ("plan FILE",
// then "uniform N" or "replicas STAGE=N...") and compares every plan, or
// the error, with testdata/plan.golden. Rewrite it with -update after a
// change meant to alter the plans.
func TestGoldenPlan(t *testing.T) {
	testkit.GoldenScript(t, "plan.txt", "plan.golden", func(w io.Writer, c testkit.Command) error {
		if c.Args[0] != "plan" || len(c.Args) < 2 {
			return fmt.Errorf("want: plan FILE [uniform N | replicas STAGE=N...]")
		}
		top, err := Load(c.Args[1])
		if err != nil {
			return err
		}
		if len(c.Args) > 2 {
			top, err = vary(top, c.Args[2], c.Args[3:])
			if err != nil {
				fmt.Fprintf(w, "error: %v\n", err)
				return nil
			}
		}
		writePlan(w, top)
		return nil
	})
}

// vary applies a script's change of replica counts.
func vary(top Topology, how string, args []string) (Topology, error) {
	switch how {
	case "uniform":
		if len(args) != 1 {
			return Topology{}, fmt.Errorf("uniform N")
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return Topology{}, err
		}
		return top.Uniform(n), nil
	case "replicas":
		counts := map[string]int{}
		for _, a := range args {
			name, count, ok := strings.Cut(a, "=")
			n, err := strconv.Atoi(count)
			if !ok || err != nil {
				return Topology{}, fmt.Errorf("replicas STAGE=N, not %q", a)
			}
			counts[name] = n
		}
		return top.WithReplicas(counts)
	}
	return Topology{}, fmt.Errorf("unknown change %q", how)
}

// writePlan writes a plan one line per task, stream and process.
func writePlan(w io.Writer, top Topology) {
	fmt.Fprintln(w, "tasks:")
	for _, s := range top.Stages {
		fmt.Fprintf(w, "  %s[%d] %s, operator %s\n", s.Name, s.Replicas, s.Role, s.Operator)
		for _, c := range s.Chain {
			fmt.Fprintf(w, "    %s[%d] %s, operator %s\n", c.Name, c.Replicas, c.Role, c.Operator)
		}
	}
	fmt.Fprintln(w, "chained (calls inside a task):")
	for _, s := range top.Chained {
		fmt.Fprintf(w, "  %s\n", describeStream(s))
	}
	fmt.Fprintln(w, "channels:")
	for _, s := range top.Streams {
		fmt.Fprintf(w, "  %s\n", describeStream(s))
	}
	var procs []string
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		procs = append(procs, fmt.Sprintf("%s:%d", in.Name(), top.Port(in)))
	}
	fmt.Fprintf(w, "processes (public port %d): %s\n", top.PublicPort(), strings.Join(procs, " "))
}

func describeStream(s Stream) string {
	key := s.Key
	if key == "" {
		key = "(none)"
	}
	return fmt.Sprintf("%s: %s -> %s, key %s", s.Name, s.From, s.To, key)
}
