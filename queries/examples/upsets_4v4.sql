-- The twenty 4v4 matches won by the team with the lowest summed rating,
-- by the most (CASE inside aggregates, HAVING, ORDER BY and LIMIT): every
-- player rated, four winners.
SELECT match,
       SUM(CASE WHEN winner THEN rating ELSE 0 END) AS winners_rating,
       SUM(CASE WHEN NOT winner THEN rating ELSE 0 END) AS losers_rating,
       SUM(CASE WHEN NOT winner THEN rating ELSE 0 END) - SUM(CASE WHEN winner THEN rating ELSE 0 END) AS gap
FROM match_players
GROUP BY match
HAVING COUNT(*) = 8
   AND COUNT(rating) = 8
   AND COUNT(CASE WHEN winner THEN 1 END) = 4
   AND COUNT(CASE WHEN NOT winner THEN 1 END) = 4
ORDER BY gap DESC, match
LIMIT 20
