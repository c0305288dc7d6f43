-- Games and wins of each civilization on each ladder, on Arabia (a join,
-- grouped by a key of each side).
SELECT m.ladder, p.civ,
       COUNT(*) AS played,
       SUM(CASE WHEN p.winner THEN 1 ELSE 0 END) AS wins
FROM match_players AS p JOIN matches AS m ON p.match = m.token
WHERE m.map = 'arabia'
  AND p.civ <> ''
GROUP BY m.ladder, p.civ
ORDER BY m.ladder, played DESC, p.civ
