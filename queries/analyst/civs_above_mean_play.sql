-- Civilizations played more often than the mean civilization, and how
-- many times the mean, if any match of the ladder RM_1v1 was played
-- (scalar subqueries in HAVING and in SELECT, EXISTS).
SELECT civ,
       COUNT(*) AS players,
       ROUND(COUNT(*) / (SELECT COUNT(*) / COUNT(DISTINCT civ) FROM match_players WHERE civ <> ''), 2) AS times_the_mean
FROM match_players
WHERE civ <> ''
  AND EXISTS (SELECT 1 FROM matches WHERE ladder = 'RM_1v1')
GROUP BY civ
HAVING COUNT(*) > (SELECT COUNT(*) / COUNT(DISTINCT civ) FROM match_players WHERE civ <> '')
ORDER BY players DESC, civ
