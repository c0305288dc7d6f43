-- The best 1v1 win rates of a civilization on a map, of those played 20
-- times or more (two CTEs, the second reading the first, ROUND).
WITH plays AS (
    SELECT m.map, p.civ, p.winner
    FROM match_players AS p
    JOIN matches AS m ON p.match = m.token
    WHERE m.ladder = 'RM_1v1' AND p.civ <> '' AND p.winner IS NOT NULL
), per_civ AS (
    SELECT map, civ, COUNT(*) AS games, COUNT(*) FILTER (WHERE winner) AS wins
    FROM plays
    GROUP BY map, civ
)
SELECT map, civ, games, wins, ROUND(100.0 * wins / games, 1) AS win_pct
FROM per_civ
WHERE games >= 20
ORDER BY 2 * wins - games DESC, games DESC, map, civ
LIMIT 20
