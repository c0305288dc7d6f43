-- Non-mirror 1v1 matches rated above 1000 on four open maps, per map, with
-- the best average rating seen (IN lists).
SELECT map, COUNT(*) AS games, MAX(average_rating) AS top_rating
FROM matches
WHERE map IN ('arabia', 'arena', 'nomad', 'steppe')
  AND ladder IN ('RM_1v1', 'DM_1v1', 'EW_1v1')
  AND NOT mirror
  AND average_rating > 1000
GROUP BY map
ORDER BY map
