-- Matches per ladder under each ceiling of 500 of their average rating
-- (CEIL, CAST of a text literal, NOT BETWEEN, ORDER BY an expression).
SELECT ladder,
       CEIL(average_rating / 500) * 500 AS ceiling,
       COUNT(*) AS matches
FROM matches
WHERE average_rating NOT BETWEEN 0 AND CAST('500' AS numeric)
  AND ladder IN ('RM_1v1', 'RM_TEAM')
GROUP BY ladder, 2
ORDER BY ladder, CEIL(average_rating / 500) * 500 DESC
