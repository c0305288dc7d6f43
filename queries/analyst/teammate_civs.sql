-- The civilizations played together on one team most often, and how often
-- such a team won (a self-join on two keys: the match and the team).
SELECT p.civ, q.civ AS teammate,
       COUNT(*) AS together,
       COUNT(*) FILTER (WHERE p.winner) AS won
FROM match_players AS p
JOIN match_players AS q ON q.match = p.match AND q.team = p.team
WHERE p.civ < q.civ
  AND p.civ <> ''
GROUP BY 1, 2
ORDER BY together DESC, 1, 2
LIMIT 25
