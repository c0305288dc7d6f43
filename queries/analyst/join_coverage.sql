-- Both files joined whole: per ladder, the rows of a match and a player,
-- of a match alone and of a player alone (a FULL JOIN, COALESCE, GROUP BY
-- a position).
SELECT COALESCE(m.ladder, '(no match)') AS ladder_name,
       COUNT(*) AS joined_rows,
       COUNT(m.token) AS match_side,
       COUNT(p.match) AS player_side,
       COUNT(*) FILTER (WHERE p.match IS NULL) AS matches_alone
FROM matches AS m
FULL JOIN match_players AS p ON p.match = m.token
GROUP BY 1
ORDER BY 1
