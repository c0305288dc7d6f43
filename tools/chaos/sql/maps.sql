-- Players and the top rating per map: a join of the two files on the
-- match, grouped by another key than the join's (partial aggregates at
-- the shards, the final one at the gateway).
SELECT m.map, COUNT(*) AS players, MAX(p.rating) AS top
FROM matches m JOIN match_players p ON p.match = m.token
GROUP BY m.map
ORDER BY players DESC, m.map
