-- How many different maps each server hosts, its matches and the ranked
-- ones among them (COUNT(DISTINCT), FILTER, STARTS_WITH).
SELECT server,
       COUNT(DISTINCT map) AS maps,
       COUNT(*) AS matches,
       COUNT(*) FILTER (WHERE STARTS_WITH(ladder, 'RM_')) AS ranked
FROM matches
WHERE server <> ''
GROUP BY server
ORDER BY maps DESC, matches DESC, server
