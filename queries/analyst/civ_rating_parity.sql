-- Per civilization: its players, how many have an odd rating once
-- rounded to a whole number, the highest of a player's rating and the
-- match's average to one decimal, and whether any (all) of them won:
-- the ten with the most players (ratings in range: a rating that is not
-- a number is no whole number).
SELECT p.civ,
       COUNT(*) AS players,
       COUNT(*) FILTER (WHERE CAST(p.rating AS integer) % 2 = 1) AS odd_ratings,
       MAX(GREATEST(p.rating, m.average_rating)::numeric(10, 1)) AS highest,
       BOOL_OR(p.winner) AS any_won,
       BOOL_AND(p.winner) AS all_won
FROM match_players AS p
JOIN matches AS m ON m.token = p.match
WHERE p.rating BETWEEN 0 AND 5000 AND m.average_rating BETWEEN 0 AND 5000
GROUP BY p.civ
ORDER BY players DESC NULLS FIRST, p.civ
FETCH FIRST 10 ROWS ONLY
