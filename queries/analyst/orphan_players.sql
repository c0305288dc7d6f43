-- Player rows per civilization, and how many of them have their match in
-- matches.csv (a RIGHT JOIN: every player row kept).
SELECT p.civ,
       COUNT(*) AS player_rows,
       COUNT(m.token) AS with_match,
       COUNT(*) - COUNT(m.token) AS orphans
FROM matches AS m
RIGHT JOIN match_players AS p ON p.match = m.token
GROUP BY p.civ
ORDER BY orphans DESC, player_rows DESC, p.civ
LIMIT 20
