-- Q2: the weaker player won a 1v1 (docs/queries.md): matches of exactly
-- two rows, one winner and one loser, both rated, the winner above 1000
-- and 10 x winner's rating <= 7 x loser's.
SELECT match AS token
FROM match_players
GROUP BY match
HAVING COUNT(*) = 2
   AND COUNT(CASE WHEN winner THEN 1 END) = 1
   AND COUNT(CASE WHEN NOT winner THEN 1 END) = 1
   AND COUNT(rating) = 2
   AND MAX(CASE WHEN winner THEN rating END) > 1000
   AND 10 * MAX(CASE WHEN winner THEN rating END) <= 7 * MAX(CASE WHEN NOT winner THEN rating END)
ORDER BY token
