-- Per civilization, its distinct ratings: how many, their mean and sum,
-- and the range (COUNT, AVG and SUM of DISTINCT).
SELECT civ,
       COUNT(DISTINCT rating) AS ratings,
       AVG(DISTINCT rating) AS mean_of_ratings,
       SUM(DISTINCT rating) AS sum_of_ratings,
       MIN(rating) AS lowest,
       MAX(rating) AS highest
FROM match_players
WHERE civ <> ''
GROUP BY civ
ORDER BY civ
