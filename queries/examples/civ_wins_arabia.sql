-- Wins and games of each civilization on Arabia (a semi-join on the
-- matches of one map).
SELECT civ,
       SUM(CASE WHEN winner THEN 1 ELSE 0 END) AS wins,
       COUNT(*) AS played
FROM match_players
WHERE match IN (SELECT token FROM matches WHERE map = 'arabia')
  AND civ <> ''
GROUP BY civ
ORDER BY wins DESC, civ
