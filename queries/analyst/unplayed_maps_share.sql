-- The share of all matches each map hosted, for maps never played in a
-- death match ladder above 1600 (a scalar subquery in SELECT, NOT IN and
-- NOT EXISTS of uncorrelated subqueries).
SELECT map,
       COUNT(*) AS matches,
       ROUND(100.0 * COUNT(*) / (SELECT COUNT(*) FROM matches), 3) AS pct_of_all
FROM matches
WHERE map NOT IN (SELECT map FROM matches WHERE ladder LIKE 'DM%' AND average_rating > 1600 AND map IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM matches WHERE ladder = 'no such ladder')
GROUP BY map
ORDER BY matches DESC, map
