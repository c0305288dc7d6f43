-- Players rated above 1800 on each map (a join of the players with their
-- match).
SELECT m.map, COUNT(*) AS players
FROM match_players AS p JOIN matches AS m ON p.match = m.token
WHERE p.rating > 1800
GROUP BY m.map
ORDER BY players DESC, m.map
