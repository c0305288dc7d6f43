-- The share of mirror matches on each map among those whose mirror flag
-- is known (NULLIF against a division by zero, ROUND, ORDER BY expressions).
SELECT map,
       COUNT(*) FILTER (WHERE mirror) AS mirrors,
       COUNT(mirror) AS known,
       ROUND(100.0 * COUNT(*) FILTER (WHERE mirror) / NULLIF(COUNT(mirror), 0), 2) AS mirror_pct
FROM matches
WHERE map <> ''
GROUP BY map
ORDER BY COUNT(*) FILTER (WHERE mirror) * 1000 DESC, map
