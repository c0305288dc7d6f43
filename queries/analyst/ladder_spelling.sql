-- Ranked ladders as written in any letter case: matches per ladder, and
-- how many spell it otherwise (ILIKE, UPPER, NOT LIKE, GROUP BY an alias).
SELECT UPPER(ladder) AS ladder_key,
       COUNT(*) AS matches,
       COUNT(*) FILTER (WHERE ladder NOT LIKE 'RM%') AS miscased
FROM matches
WHERE ladder ILIKE 'rm_%'
GROUP BY ladder_key
ORDER BY ladder_key
