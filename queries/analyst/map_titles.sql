-- Map names as titles, their length and matches (UPPER, SUBSTR, REPLACE,
-- ||, LENGTH, GROUP BY positions, ORDER BY an expression).
SELECT UPPER(SUBSTR(map, 1, 1)) || REPLACE(SUBSTR(map, 2), '_', ' ') AS map_title,
       LENGTH(map) AS name_length,
       COUNT(*) AS matches
FROM matches
WHERE map <> ''
GROUP BY 1, 2
ORDER BY LENGTH(map) DESC, map_title
