-- The five most played civilizations on Arabia and on Arena, one list
-- (UNION ALL of parenthesized SELECTs, each with its ORDER BY and LIMIT).
(SELECT 'arabia' AS map_name, p.civ, COUNT(*) AS played
 FROM match_players AS p JOIN matches AS m ON p.match = m.token
 WHERE m.map = 'arabia' AND p.civ <> ''
 GROUP BY p.civ
 ORDER BY played DESC, p.civ
 LIMIT 5)
UNION ALL
(SELECT 'arena', p.civ, COUNT(*) AS played
 FROM match_players AS p JOIN matches AS m ON p.match = m.token
 WHERE m.map = 'arena' AND p.civ <> ''
 GROUP BY p.civ
 ORDER BY played DESC, p.civ
 LIMIT 5)
ORDER BY 1, 3 DESC, 2
