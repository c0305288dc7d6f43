-- The civilizations most played on each map of ranked team games, in how
-- many matches (JOIN ... USING a subquery's renamed column, COUNT(DISTINCT)).
SELECT m.map, p.civ,
       COUNT(*) AS players,
       COUNT(DISTINCT match) AS matches
FROM match_players AS p
JOIN (SELECT token AS match, map FROM matches WHERE ladder = 'RM_TEAM') AS m USING (match)
WHERE p.civ <> ''
GROUP BY m.map, p.civ
ORDER BY players DESC, m.map, p.civ
LIMIT 20
