-- The maps played on each server in team ranked matches (DISTINCT).
SELECT DISTINCT server, map
FROM matches
WHERE ladder = 'RM_TEAM'
ORDER BY server, map
