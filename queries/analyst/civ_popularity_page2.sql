-- The second page of the most played civilizations: places 11 to 20
-- (LIMIT and OFFSET).
SELECT civ, COUNT(*) AS played
FROM match_players
WHERE civ <> ''
GROUP BY civ
ORDER BY played DESC, civ
LIMIT 10 OFFSET 10
