-- Matches and mean rating per region of servers (CASE over LIKE and
-- STARTS_WITH, TRIM, ROUND of AVG, GROUP BY an alias).
SELECT CASE WHEN server LIKE '%europe' OR server = 'ukwest' THEN 'europe'
            WHEN server LIKE 'east%' OR server LIKE 'westus%' OR STARTS_WITH(server, 'brazil') THEN 'americas'
            ELSE 'asia-pacific' END AS region,
       COUNT(*) AS matches,
       ROUND(AVG(average_rating), 1) AS mean_rating
FROM matches
WHERE TRIM(server) <> ''
GROUP BY region
ORDER BY region
