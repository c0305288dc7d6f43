-- Mirror matches (both sides the same civilization) on each map, and the
-- matches whose mirror flag is known.
SELECT map,
       SUM(CASE WHEN mirror THEN 1 ELSE 0 END) AS mirrors,
       COUNT(mirror) AS known
FROM matches
GROUP BY map
ORDER BY mirrors DESC, map
