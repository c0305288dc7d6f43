-- The four queries of docs/queries.md as a DuckDB user would write them
-- (duckdb-queries --plain): read_csv with every column as text and the
-- rows it cannot read skipped, try_cast to BOOLEAN, DOUBLE and INTERVAL,
-- plain SQL. No value rules of the contract: DuckDB's casts decide what a
-- value is, so the answers are not always the reference's (doc.go says
-- where they part). Statements are separated by a line holding only
-- "-- next"; the first loads the tables, each other returns the rows of
-- one output file, in order: the file its "-- NAME.csv:" line names,
-- under a header of its columns' names. getvariable('matches') and
-- getvariable('players') are the input files' paths.

CREATE TABLE m AS
SELECT token, ladder, map, server,
       try_cast(mirror AS BOOLEAN) AS mirror,
       try_cast(average_rating AS DOUBLE) AS average_rating,
       try_cast(duration AS INTERVAL) AS duration
FROM read_csv(getvariable('matches'), all_varchar = true, ignore_errors = true);
CREATE TABLE p AS
SELECT match, civ,
       try_cast(rating AS DOUBLE) AS rating,
       try_cast(winner AS BOOLEAN) AS winner
FROM read_csv(getvariable('players'), all_varchar = true, ignore_errors = true);
-- next
-- q1.csv: long pro matches.
SELECT DISTINCT token FROM m
WHERE average_rating > 2000
  AND server IN ('koreacentral', 'southeastasia', 'eastus')
  AND duration > INTERVAL 2 HOUR
ORDER BY token;
-- next
-- q2.csv: the weaker player won a 1v1.
SELECT match AS token FROM p
GROUP BY match
HAVING count(*) = 2
   AND count(*) FILTER (WHERE winner) = 1
   AND count(*) FILTER (WHERE NOT winner) = 1
   AND count(rating) = 2
   AND max(rating) FILTER (WHERE winner) > 1000
   AND 10 * max(rating) FILTER (WHERE winner) <= 7 * max(rating) FILTER (WHERE NOT winner)
ORDER BY match;
-- next
-- q3.csv: civilization win rates in 1v1 on Arena.
WITH q AS (SELECT DISTINCT token FROM m WHERE ladder = 'RM_1v1' AND map = 'arena' AND NOT mirror)
SELECT civ, count(*) FILTER (WHERE winner) AS wins, count(*) AS played,
       printf('%.4f', 100 * count(*) FILTER (WHERE winner) / count(*)) AS win_pct
FROM p JOIN q ON p.match = q.token
WHERE civ <> '' AND winner IS NOT NULL
GROUP BY civ
ORDER BY civ;
-- next
-- q4.csv: what strong team players pick on Islands.
WITH q AS (SELECT DISTINCT token FROM m WHERE ladder = 'RM_TEAM' AND map = 'islands')
SELECT row_number() OVER (ORDER BY count(*) DESC, civ) AS rank, civ, count(*) AS players
FROM p JOIN q ON p.match = q.token
WHERE rating > 2000 AND civ <> ''
GROUP BY civ
ORDER BY players DESC, civ
LIMIT 5;
