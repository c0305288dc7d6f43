-- Civilization against civilization in ranked 1v1: games and wins of the
-- first against the second, the thirty most played pairings (a self-join
-- of match_players through matches: three tables).
SELECT a.civ, b.civ AS opponent,
       COUNT(*) AS games,
       COUNT(*) FILTER (WHERE a.winner) AS wins
FROM matches AS m
JOIN match_players AS a ON a.match = m.token
JOIN match_players AS b ON b.match = m.token
WHERE m.ladder = 'RM_1v1'
  AND a.civ <> b.civ
  AND a.civ <> ''
  AND b.civ <> ''
GROUP BY a.civ, b.civ
ORDER BY 3 DESC, 1, 2
LIMIT 30
