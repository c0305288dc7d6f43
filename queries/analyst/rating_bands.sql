-- Players and wins per rating band of 200 between 800 and 2799 (BETWEEN,
-- FLOOR, GROUP BY an alias, ORDER BY a position).
SELECT FLOOR(rating / 200) * 200 AS band_low,
       COUNT(*) AS players,
       COUNT(*) FILTER (WHERE winner) AS wins,
       COUNT(*) FILTER (WHERE winner IS NULL) AS unknown
FROM match_players
WHERE rating BETWEEN 800 AND 2799
GROUP BY band_low
ORDER BY 1
