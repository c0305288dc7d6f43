-- The ten civilizations with the best win rate among players rated above
-- 1500, of those played at least 100 times (HAVING, ORDER BY, LIMIT).
SELECT civ,
       SUM(CASE WHEN winner THEN 1 ELSE 0 END) AS wins,
       COUNT(*) AS played,
       PERCENT(SUM(CASE WHEN winner THEN 1 ELSE 0 END), COUNT(*)) AS win_pct
FROM match_players
WHERE winner IS NOT NULL
  AND civ <> ''
  AND rating > 1500
GROUP BY civ
HAVING COUNT(*) >= 100
ORDER BY win_pct DESC, civ
LIMIT 10
