-- Issue 38's query: the win rate by rating band, grouped by a four-branch
-- CASE (the channel that shuffles by it is named after it, longer than a
-- stream's name may be: in a deployment it once hung for ever).
SELECT CASE WHEN rating < 1000 THEN 'low' WHEN rating < 1500 THEN 'mid' WHEN rating < 2000 THEN 'high' ELSE 'top' END AS band,
       COUNT(*) AS players,
       SUM(CASE WHEN winner THEN 1 ELSE 0 END) AS wins,
       AVG(CASE WHEN winner THEN 1.0 ELSE 0.0 END) AS win_rate
FROM match_players
GROUP BY CASE WHEN rating < 1000 THEN 'low' WHEN rating < 1500 THEN 'mid' WHEN rating < 2000 THEN 'high' ELSE 'top' END
ORDER BY band
