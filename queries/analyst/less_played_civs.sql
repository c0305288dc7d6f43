-- The civilizations outside the ten most played (EXCEPT, its second
-- operand a parenthesized SELECT with its own ORDER BY and LIMIT).
SELECT civ FROM match_players WHERE civ <> ''
EXCEPT
(SELECT civ FROM match_players GROUP BY civ ORDER BY COUNT(*) DESC, civ LIMIT 10)
ORDER BY civ
