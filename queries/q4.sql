-- Q4: what strong team players pick on Islands (docs/queries.md): the
-- five civilizations with the most rows, ties by name.
SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, civ) AS rank,
       civ,
       COUNT(*) AS players
FROM match_players
WHERE match IN (SELECT token FROM matches WHERE ladder = 'RM_TEAM' AND map = 'islands')
  AND rating > 2000
  AND civ <> ''
GROUP BY civ
ORDER BY players DESC, civ
LIMIT 5
