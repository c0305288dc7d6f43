-- The two tables of a job of query files (duckdb-queries --query
-- NAME=FILE), loaded as a DuckDB user would: read_csv with every column
-- as text and the rows it cannot read skipped, then the columns of
-- docs/queries.md's kinds cast with try_cast (the numbers to DOUBLE, the
-- booleans to BOOLEAN, the duration to INTERVAL), every other column
-- text, under its header's name. The query files then read matches and
-- match_players as they are. getvariable('matches') and
-- getvariable('players') are the input files' paths.
CREATE TABLE matches AS
SELECT * REPLACE (
    try_cast(mirror AS BOOLEAN) AS mirror,
    try_cast(average_rating AS DOUBLE) AS average_rating,
    try_cast(duration AS INTERVAL) AS duration)
FROM read_csv(getvariable('matches'), all_varchar = true, ignore_errors = true);
CREATE TABLE match_players AS
SELECT * REPLACE (
    try_cast(rating AS DOUBLE) AS rating,
    try_cast(winner AS BOOLEAN) AS winner)
FROM read_csv(getvariable('players'), all_varchar = true, ignore_errors = true);
