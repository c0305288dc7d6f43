-- The four queries of docs/queries.md over the tables m and p that
-- load.go creates (see its comment for the columns). Each statement
-- returns the rows of one output file, in order, every field as text:
-- the file its "-- NAME.csv:" line names, under a header of its columns'
-- names. Statements are separated by a line holding only "-- next".

-- q1.csv: long pro matches.
SELECT DISTINCT token FROM m
WHERE server IN ('koreacentral', 'southeastasia', 'eastus')
  AND wl_gt(average_rating, average_rating_text, 2000)
  AND duration_s > 7200
ORDER BY token;
-- next
-- q2.csv: the weaker player won a 1v1.
WITH g AS (
    SELECT match,
           count(*) AS n,
           count(*) FILTER (WHERE winner) AS winners,
           count(*) FILTER (WHERE NOT winner) AS losers,
           count(rating_text) AS rated,
           any_value(rating) FILTER (WHERE winner) AS w,
           any_value(rating_text) FILTER (WHERE winner) AS w_text,
           any_value(rating) FILTER (WHERE NOT winner) AS l,
           any_value(rating_text) FILTER (WHERE NOT winner) AS l_text
    FROM p GROUP BY match)
SELECT match AS token FROM g
WHERE n = 2 AND winners = 1 AND losers = 1 AND rated = 2
  AND CASE WHEN w IS NOT NULL AND l IS NOT NULL THEN w > 1000 AND 10 * w <= 7 * l
           ELSE wl_text_gt(w_text, '1000') AND wl_cmp(10, w_text, 7, l_text) <= 0 END
ORDER BY match;
-- next
-- q3.csv: civilization win rates in 1v1 on Arena.
WITH q AS (SELECT DISTINCT token FROM m WHERE ladder = 'RM_1v1' AND map = 'arena' AND mirror = false),
c AS (
    SELECT civ, count(*) FILTER (WHERE winner) AS wins, count(*) AS played
    FROM p JOIN q ON p.match = q.token
    WHERE civ <> '' AND winner IS NOT NULL
    GROUP BY civ)
SELECT civ, CAST(wins AS VARCHAR) AS wins, CAST(played AS VARCHAR) AS played, printf('%.4f', 100 * wins / played) AS win_pct
FROM c ORDER BY civ;
-- next
-- q4.csv: what strong team players pick on Islands.
WITH q AS (SELECT DISTINCT token FROM m WHERE ladder = 'RM_TEAM' AND map = 'islands'),
c AS (
    SELECT civ, count(*) AS players
    FROM p JOIN q ON p.match = q.token
    WHERE civ <> '' AND wl_gt(rating, rating_text, 2000)
    GROUP BY civ)
SELECT CAST(row_number() OVER (ORDER BY c.players DESC, c.civ) AS VARCHAR) AS rank, civ, CAST(c.players AS VARCHAR) AS players
FROM c ORDER BY c.players DESC, c.civ LIMIT 5;
