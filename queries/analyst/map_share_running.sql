-- Per ladder, its maps from the most played down: matches, the running
-- total and share of the ladder's matches, and the ladder's largest and
-- mean count of a map (SUM, COUNT, MIN, MAX and AVG OVER a partition, with
-- and without ORDER BY).
WITH per_map AS (
    SELECT ladder, map, COUNT(*) AS matches
    FROM matches
    WHERE ladder IN ('RM_1v1', 'RM_TEAM')
    GROUP BY ladder, map
)
SELECT ladder, map, matches,
       SUM(matches) OVER (PARTITION BY ladder ORDER BY matches DESC, map) AS running,
       COUNT(*) OVER (PARTITION BY ladder ORDER BY matches DESC, map) AS place,
       MAX(matches) OVER (PARTITION BY ladder) AS most,
       MIN(matches) OVER (PARTITION BY ladder) AS least,
       ROUND(AVG(matches) OVER (PARTITION BY ladder), 2) AS mean
FROM per_map
ORDER BY ladder, matches DESC, map
