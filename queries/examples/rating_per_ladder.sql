-- The average, lowest and highest average rating of the matches of each
-- ladder.
SELECT ladder,
       COUNT(*) AS games,
       AVG(average_rating) AS mean_rating,
       MIN(average_rating) AS lowest,
       MAX(average_rating) AS highest
FROM matches
GROUP BY ladder
ORDER BY ladder
