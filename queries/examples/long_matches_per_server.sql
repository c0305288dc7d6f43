-- Matches of more than an hour on each server.
SELECT server, COUNT(*) AS long_games
FROM matches
WHERE DURATION_SECONDS(duration) > 3600
GROUP BY server
ORDER BY long_games DESC, server
