// Package physical is the physical planner of the SQL engine: it takes the logical plans of one job's queries
// (services/dataflow/sql/plan, made by sql.Compile) and the cluster's shape
// (the gateway task and the shard task of the deployment's topology,
// deploy.Topology) and places every operator on a task, with the channels
// between the tasks: one physical Plan for the whole job, plain data with
// Encode/Decode (it is to be stored with the job and travel with its
// streams) and a String for `wololo explain`.
//
// The design, and why:
//
//   - Build places plans as the logical rewrites leave them
//     (services/dataflow/sql/rewrite: filters pushed below joins, the
//     columns nothing reads pruned), which it applies first; it rewrites
//     nothing itself.
//   - Rows are parsed at the gateway, where the files arrive, so the work
//     that needs no other row is done there, once per row: each input
//     table has one scan for the whole job (the columns any query reads,
//     each as the kind that query reads it as), and each query's filters
//     and projections right over it run there, as the condition and the
//     columns of the query's route on the channel that carries the
//     table's rows on. A query's rows leave the gateway only where a
//     keyed operator needs them elsewhere.
//   - A keyed operator (a join or semi-join by its key, an aggregate by its
//     group key, DISTINCT by the whole row) needs the rows of a key
//     together: its input is shuffled by that key over a channel to the
//     shard task, whose instance a stable hash of the key picks. The shuffle
//     of a table by a key is one channel for the whole job, whatever the
//     number of queries that need it: the gateway routes a row once per
//     distinct key, and the channel carries, per consumer (a route), the
//     condition the row passed at the gateway (its own filters) and the
//     columns it reads, so the rows a consumer gets are exactly its own.
//     Input that is already partitioned by the key an operator needs (the
//     output of a join on the same key, an aggregate's groups) is not
//     shuffled again; input partitioned by another key is shuffled again,
//     from shard to shard. An outer join's output is partitioned only as
//     the side it keeps every row of is (join.go): its NULL-padded
//     columns are NULL on every shard.
//   - The inner joins of a job's queries over the same two tables and
//     keys, their inputs being parsed, are one join operator (share.go):
//     its routes carry the rows any of them takes, and each query reads
//     it through its own conditions and columns, on the shard. The eight
//     inner joins of the players to their matches in seven analyst
//     queries held eight copies of the matches and spilled eight of the
//     players.
//   - Operators keyed by the same key in the same task share one table
//     (Plan.Tables): the key classes are unions of the channels' keys that
//     a join or a semi-join makes equal (match_players.match with
//     matches.token, in q3 and q4), so that the hand-fused MatchTable of
//     the four default queries (the q2 grouper and the q3 and q4 joiners
//     over one table keyed by match) is what the planner finds for any
//     such set of queries.
//   - An aggregate whose input is partitioned by a part of its group key
//     sees whole groups on each shard: it runs complete there, and so do
//     its HAVING and projection (q2's grouper), and only the qualifying
//     rows go to the gateway. Otherwise (q3 and q4, grouped by civ after a
//     semi-join by match) each shard computes partial aggregates (an
//     average as its sum and count) that the gateway merges into the final
//     aggregate, as today's joiners and aggregators do; HAVING then runs at
//     the gateway. DISTINCT is the same: complete where the rows are
//     partitioned by a part of the row, else at the shards and again at
//     the gateway. A global aggregate (no GROUP BY) over one table runs at
//     the gateway, where its rows are parsed.
//   - A window function (window.go) needs its partition's rows: with
//     PARTITION BY, its input is shuffled by that key to the shard task
//     (unless partitioned by a part of it already) and each shard computes
//     its partitions; without, it runs at the gateway, one partition.
//   - Sort, LIMIT and ROW_NUMBER need every row: they run at the gateway,
//     and each query ends in its sink there (NAME.csv). A query that needs
//     no key (a plain filter) never leaves the gateway, but its rows still
//     cross a channel, from the gateway to itself: only exchanges read a
//     scan (Plan.Source), so that routing the rows of a file as it is
//     parsed (the gateway's upload) runs apart from everything done with
//     rows that are in (the gateway's stage runtime), as on the shards.
//     The cost is one encoding of those rows; the gain is that a process
//     runs one kind of thing per part of its task.
//
// The cross product of a subquery of an expression (subquery.go: a
// join on a constant key that the binder made, with the subquery's
// one-row aggregate) is not shuffled by its constant key, which would
// gather every row on one shard: the one row is broadcast to every
// shard instance (Channel.Broadcast) and the join runs where the
// query's rows are.
//
// A UNION ALL (setop.go) moves no row of its own: under a keyed operator
// (UNION's DISTINCT, INTERSECT's and EXCEPT's aggregate by the row) each
// of its inputs is shuffled by that operator's key and it runs on the
// shards, the operator complete after it; else where its inputs are.
//
// When the topology has one task only (a gateway and no shard task), the
// shard task is the gateway's: its keyed operators run there too, fed by
// channels from the gateway to itself.
//
// A shuffle from shard to shard (a second keyed operator on another key,
// such as two IN subqueries on different columns) is a channel from the
// shard task to itself: it ends when the exchange writing it has had the
// end of its own input from every sender, not when the whole task has
// (services/dataflow/sql/sqlops's Task ends it so, wherever it runs: in
// the demo's runner and in the stage runtime alike).
//
// This package places operators and describes them; it runs nothing.
// services/dataflow/sql/sqlops runs a Plan: each Op as an operator over
// columnar batches, and in one process the whole plan (sqlops.Run), which
// the tests hold to exec's answers and the reference's. Running it in the
// cluster's processes (jobs, the gateway, the stage runtime) is next.
//
// The package is pure: no I/O. It imports the logical plan, its rewrites
// and deploy (the topology's tasks), nothing else of this module.
package physical
