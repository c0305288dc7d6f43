-- Q3: civilization win rates in 1v1 on Arena (docs/queries.md). The
-- semi-join IN (SELECT ...) counts each player row once, however many
-- rows its qualifying token has in matches.
SELECT civ,
       SUM(CASE WHEN winner THEN 1 ELSE 0 END) AS wins,
       COUNT(*) AS played,
       PERCENT(SUM(CASE WHEN winner THEN 1 ELSE 0 END), COUNT(*)) AS win_pct
FROM match_players
WHERE match IN (SELECT token FROM matches WHERE ladder = 'RM_1v1' AND map = 'arena' AND NOT mirror)
  AND civ <> ''
  AND winner IS NOT NULL
GROUP BY civ
ORDER BY civ
