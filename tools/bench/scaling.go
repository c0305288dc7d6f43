package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wololo/wololo/deploy"
)

// ScaledTask is the task whose replica count the scaling runs change: the
// default plan's sharded task (the filters, the grouper and the joiners).
const ScaledTask = "shard"

// ScalingRun is local mode with the sharded task at some replica count.
type ScalingRun struct {
	Replicas int
	Plan     string // the topology's tasks and their replicas (deploy.Topology.Tasks)
	Run      LocalRun
}

// TaskCPU is a scaling run's CPU time per task (every instance of it
// added up) and per master, by name, and in total.
func (s ScalingRun) TaskCPU() (tasks map[string]time.Duration, total time.Duration) {
	tasks = map[string]time.Duration{}
	for _, ps := range s.Run.Procs {
		name := ps.Instance
		if in, err := deploy.ParseInstance(name); err == nil {
			name = in.Stage
		}
		tasks[name] += ps.CPU
		total += ps.CPU
	}
	return tasks, total
}

// ParseScaling reads a list of replica counts such as "1,2,4".
func ParseScaling(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > deploy.MaxReplicas {
			return nil, fmt.Errorf("replica count %q: want a number from 1 to %d", f, deploy.MaxReplicas)
		}
		out = append(out, n)
	}
	return out, nil
}

// scaling runs local mode once per replica count of the sharded task, with
// no profiling, and records what each process spent.
func (b *bencher) scaling(ctx context.Context, r *Report) error {
	for _, n := range b.o.Scaling {
		top, err := deploy.Default().WithReplicas(map[string]int{ScaledTask: n})
		if err != nil {
			return err
		}
		o := b.o
		o.Topology, o.Profile = top, false
		b.logf("local mode with %d %s replicas (the cost of a row)...", n, ScaledTask)
		out := filepath.Join(b.o.Work, fmt.Sprintf("local-%s-%d", ScaledTask, n))
		run, err := runLocal(ctx, o, b.bin, out, filepath.Join(b.o.Work, "profiles-scaling"), false, b.logf)
		if err != nil {
			return fmt.Errorf("local mode with %d %s replicas: %w", n, ScaledTask, err)
		}
		run.Equal = b.check(fmt.Sprintf("local with %d %s replicas", n, ScaledTask), out)
		r.Scaling = append(r.Scaling, ScalingRun{Replicas: n, Plan: strings.Join(top.Tasks(), "; "), Run: run})
		b.logf("local with %d %s replicas: %s end to end, outputs equal: %v", n, ScaledTask, secs(run.Wall), run.Equal)
	}
	return nil
}

// renderScaling writes the table of CPU-seconds per million input rows,
// per task and in total, at each replica count.
func renderScaling(p func(string, ...any), r Report) {
	if len(r.Scaling) == 0 {
		return
	}
	rows := float64(r.Dataset.Rows()) / 1e6
	if rows <= 0 {
		return
	}
	p("## The cost of a row with more shards\n\n")
	p("Local mode (durable, mutual TLS, no profiling) once per replica count of the `%s` task, on the same dataset: CPU-seconds per million input rows (%.2f M rows), each task's instances added up. ", ScaledTask, rows)
	p("More shards must not cost more work per row; on %d CPUs the wall time cannot drop with them. ", r.Machine.CPUs)
	p("Each task instance is one process running its part of the job's plan, so a task's CPU is its operators' together (the Plan column: the topology's tasks and their replicas); the Total is the figure to compare.\n\n")
	names := map[string]bool{}
	for _, s := range r.Scaling {
		tasks, _ := s.TaskCPU()
		for name := range tasks {
			names[name] = true
		}
	}
	var cols []string
	for name := range names {
		cols = append(cols, name)
	}
	sort.Strings(cols)
	p("| %s replicas | Wall time |", ScaledTask)
	for _, c := range cols {
		p(" %s |", c)
	}
	p(" Total | Outputs | Other work on the machine | Plan |\n|---:|---:|")
	for range cols {
		p("---:|")
	}
	p("---:|---|---:|---|\n")
	for _, s := range r.Scaling {
		tasks, total := s.TaskCPU()
		p("| %d | %s |", s.Replicas, secs(s.Run.Wall))
		for _, c := range cols {
			p(" %.3f |", tasks[c].Seconds()/rows)
		}
		p(" **%.3f** | %s | %s | %s |\n", total.Seconds()/rows, equal(ProcessRun{Wall: s.Run.Wall, Equal: s.Run.Equal}), otherShare(s.Run.OtherCPU, s.Run.Wall, r.Machine.CPUs), s.Plan)
	}
	p("\n")
}
