-- Q1: long pro matches (docs/queries.md). A token on several qualifying
-- rows is listed once: DISTINCT.
SELECT DISTINCT token
FROM matches
WHERE average_rating > 2000
  AND server IN ('koreacentral', 'southeastasia', 'eastus')
  AND DURATION_SECONDS(duration) > 7200
ORDER BY token
