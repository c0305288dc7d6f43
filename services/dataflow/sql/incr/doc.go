// Package incr maintains the answer of one SQL query (a logical plan of
// services/dataflow/sql) over epochs of appended rows: a standing query
// (docs/standing.md). Append adds rows of a table to the current epoch;
// Commit ends it and returns the answer's change (rows with +n or -n
// copies, Materialize's SUBSCRIBE shape); Answer is the answer as of the
// last Commit, equal byte for byte (exec.Result's CSV) to oracle.Execute's
// over every row of the epochs so far.
//
// As in differential dataflow, what flows between the operators is
// changes: a batch of rows whose last column is each row's count (a
// zset). The operators are exec's where the logic is a batch's (filter,
// projection, the join's tables, the aggregate's accumulators, DISTINCT,
// sort, LIMIT and ROW_NUMBER for rendering); the new logic is that of
// epochs and retractions, small: the join of changes (ΔL ⋈ R' + L ⋈ ΔR),
// the semi-join whose outer rows wait for their key, the aggregate's
// before and after rows of the groups an epoch touches, the counted
// DISTINCT, the answer's multiset and its maintained LIMIT (topOp).
// An answer with only projections above its Sort also keeps its rows in
// the answer's order with their CSV lines (sortedLines, derived, not in
// a snapshot), so that Op.AnswerCSV writes a version without sorting
// it again: an epoch places its new rows by binary search.
//
// Check finds the parts of a plan whose rows only arrive (scans,
// filters, projections, joins, semi-joins, UNION ALL and DISTINCT of
// them), where no operator needs to take a row back and each keeps the
// least state (a semi-join forgets a row that passed, a LIMIT keeps its
// first N, an OFFSET's rows included);
// over rows that leave, the operators take them back (a counted
// DISTINCT, a semi-join that keeps every row by key, a GROUP BY that
// computes a touched group again from its rows). It refuses, wrapping
// ErrUnsupported, a plan it does not know how to maintain: of those
// Compile makes, one of an outer join (join.go), whose NULL-padded rows
// are not monotone. A window function (window.go) is regroupOp keyed by
// its partition: each partition an epoch touches computed again.
// are not monotone, and so the mark join of a subquery x [NOT] IN
// (SELECT ...) that is not a top-level WHERE condition (named as that).
// EXISTS and scalar subqueries, a cross product with a one-row
// aggregate, are an inner join: maintained as any.
//
// Every operator's work in an epoch is proportional to the epoch's rows
// and to the changes, but for the few docs/standing.md lists (a LIMIT
// over groups sorts them all again). The state is plain data (exec's key
// tables and accumulators, maps, counts, stored batches), never a
// pointer into an input batch. What grows with the rows is held as
// columns, not per row: a semi-join's kept rows (keptRows, the most a
// standing job holds: every outer row whose key has not come) are
// columns that grow, beside the key table that has their key, a text of
// few values two bytes a row; stored batches keep no weight column.
//
// An aggregate whose HAVING bounds a count from above (q2's COUNT(*) =
// 2) drops the accumulators of the groups that can never pass it again,
// keeping a bit per key of them (finish.go): q2 holds the matches that
// may still pass, not every match.
//
// An operator over rows that only arrive (an aggregate, a join, a
// semi-join on a subquery that only grows, a DISTINCT) also takes an
// epoch's changes a batch at a time as they arrive (Op.Fold, fold.go),
// so what runs it need not hold the epoch's rows: an aggregate then
// remembers of the epoch only its touched groups and their rows before,
// which are part of its state (its snapshot, taken mid-epoch, has them).
//
// The operators are also usable one by one (Op: NewOpIn, NewHavingIn,
// NewAnswer, NewPartialAggregate, NewFinalAggregate), the same code the
// Engine runs, for what places them on the tasks of a physical plan
// (services/dataflow/sql/sqlops's EpochTask) and moves the changes
// between them itself; the keyed ones of one key there may share one
// key table (NewOpIn, NewHavingIn: shared.go), a batch's keys then looked
// up once for all of them (Op.FoldSlots). A physical plan has two kinds of its own: a
// shard's partial aggregate and the gateway's final aggregate merging
// the shards' partials. The partial aggregate emits, at each epoch, for
// each group the epoch touched, its partial row before (-1) and after
// (+1), not the difference of its partial state: a difference is not
// exact for every aggregate (a SUM over NULLs alone is NULL, and a NULL
// has no difference; a MIN or MAX of rows that leave, under a semi-join
// on an aggregated subquery, moves both ways), where a row before and
// after is, for every function, with exec's partial aggregation
// unchanged. The final aggregate keeps each group's partial rows (at
// most one per shard, equal ones counted) and merges those of each group
// an epoch touches again (exec.MergeAggs): its work is the touched
// groups times the shards, its state a partial row per group and shard
// (q3's and q4's: one per civilization and shard).
//
// Snapshot writes that state, between epochs, as bytes, and Restore
// makes an engine of the same plan from them that gives the same later
// changes and answers, byte for byte: a standing job survives a SIGKILL
// from its last snapshot and the epochs after it. A snapshot is
// snapcodec's varints (a format version first, then the epochs
// committed), then each operator's state, the plan's nodes depth first:
// a scan's NULL counts; a join's rows of both sides; a semi-join's keys
// (exec.KeyTable's, in slot order), the rows it keeps (without their key
// when it is a text column: the key table has it; in chunks), then each
// key's count (1 or 0 for a subquery that only grows) and its rows'
// places among them; an aggregate's exec.Aggregation state and which
// groups pass its HAVING (and, mid-epoch, folding: the groups the epoch
// touched and their rows before; with finished groups, the keys of those
// dropped, its own key table before them when it has one); a regroup's keys and the rows it keeps per group; a
// DISTINCT's exec.Distinct keys or its counted rows; each LIMIT's or
// answer's rows with their counts and the last version shown. exec's
// structures write their own state (AppendState); stored rows are
// exec.AppendRowsState's, values in binary, with their weight column
// (held beside them, as int64s, none when all are 1). Nothing the plan says is
// written. Restore refuses, wrapping ErrSnapshot, bytes that are not a
// snapshot of the plan's engine (truncated, garbage, another plan's),
// and never panics on them (FuzzRestore).
package incr
