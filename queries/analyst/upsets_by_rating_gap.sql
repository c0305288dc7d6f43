-- How often the lower-rated player wins a 1v1, by rating gap in steps of
-- 100 (a CTE of a self-join, ABS, FLOOR, ROUND, FILTER, GROUP BY an alias).
WITH duel AS (
    SELECT w.rating AS winner_rating, l.rating AS loser_rating
    FROM matches AS m
    JOIN match_players AS w ON w.match = m.token
    JOIN match_players AS l ON l.match = m.token
    WHERE m.ladder LIKE '%1v1'
      AND w.winner
      AND NOT l.winner
)
SELECT FLOOR(ABS(winner_rating - loser_rating) / 100) * 100 AS gap,
       COUNT(*) AS games,
       COUNT(*) FILTER (WHERE winner_rating < loser_rating) AS upsets,
       ROUND(100.0 * COUNT(*) FILTER (WHERE winner_rating < loser_rating) / COUNT(*), 2) AS upset_pct
FROM duel
WHERE ABS(winner_rating - loser_rating) < 1000
GROUP BY gap
ORDER BY gap
