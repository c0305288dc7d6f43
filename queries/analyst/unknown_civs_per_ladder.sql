-- Players per ladder and civilization, an empty civilization named
-- 'unknown', with the unrated ones (COALESCE, NULLIF, a join, FILTER).
SELECT m.ladder,
       COALESCE(NULLIF(p.civ, ''), 'unknown') AS civ_name,
       COUNT(*) AS players,
       COUNT(*) FILTER (WHERE p.rating IS NULL) AS unrated
FROM match_players AS p
JOIN matches AS m ON p.match = m.token
WHERE m.ladder IN ('DM_1v1', 'EW_1v1')
GROUP BY 1, 2
ORDER BY 1, 3 DESC, 2
LIMIT 40
