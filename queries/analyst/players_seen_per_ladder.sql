-- Per ladder, the matches, those with no player row at all, and the
-- players seen per match (a LEFT JOIN, then a CTE grouped again).
WITH seen AS (
    SELECT m.token, m.ladder, COUNT(p.match) AS players
    FROM matches AS m
    LEFT JOIN match_players AS p ON p.match = m.token
    GROUP BY m.token, m.ladder
)
SELECT ladder,
       COUNT(*) AS matches,
       COUNT(*) FILTER (WHERE players = 0) AS without_players,
       SUM(players) AS player_rows,
       MAX(players) AS most_players
FROM seen
GROUP BY ladder
ORDER BY matches DESC, ladder
