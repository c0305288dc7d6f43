// Package rewrite holds the logical rewrites of the SQL engine: functions
// from a logical plan (services/dataflow/sql/plan) to a plan with the same
// answer that is cheaper to run wherever it is placed. Optimize applies
// them in order:
//
//   - filter push-down (pushFilters): the conjuncts of a filter above a
//     join that read one side only move below the join, onto that side,
//     on down a join of three tables, but never onto the side an outer
//     join pads with NULLs (join.go);
//   - the build side of each join (sides, OptimizeFor): a join whose
//     left input ends first in the order of the job's uploads has its
//     inputs swapped, so that it holds the input it has all of first
//     and streams the other through it (sides.go);
//   - column pruning and projection push-down (prune): each node computes
//     only the columns something above it reads, so a scan reads only
//     those, and a column only a filter over the parsed rows reads is
//     dropped by a projection right above that filter, where the rows
//     are parsed, instead of travelling on with them.
//
// A Window node (window.go) stops both: no filter moves below it, and
// its input is pruned to what is read above it and by its OVER clause.
//
// It is also the small algebra of expressions those rewrites are made of
// (Columns, Shift, ColRef, And), which the physical planner uses to move
// expressions between its operators and channels.
//
// Why a package of its own, and not plan: plan is plain data (types and
// their rendering, imported by every process that decodes a job) and
// promises no semantics; a rewrite is a claim about answers, held by a
// test of its own (exec's TestOptimizeKeepsAnswers: the rewritten plans'
// rows are sqlgen's naive evaluator's), and a new rewrite (constant
// folding, say) is a change here alone. Why not the
// physical planner, where they were: placing operators on tasks and
// channels (services/dataflow/sql/physical) is another job than choosing
// which logical plan to place, and a rewrite is tested on the logical
// plan's answer, with no topology. physical.Build calls Optimize before it
// places a job's plans, so every caller places the same plans; what Build
// itself does is placement only: a filter or projection over a scan runs
// at the gateway, as the scan's route's condition and columns.
//
// The package is pure: it imports the logical plan only, and copies what
// it changes (a plan given to it is not modified).
package rewrite
