-- Players of arena matches with a civilization someone rated above 2500
-- played: two semi-joins on different keys, the second a shuffle from
-- shard to shard.
SELECT token, civ FROM match_players
WHERE match IN (SELECT token FROM matches WHERE map = 'arena')
  AND civ IN (SELECT civ FROM match_players WHERE rating > 2500)
ORDER BY token, civ
