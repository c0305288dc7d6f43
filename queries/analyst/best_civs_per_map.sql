-- The three civilizations with the most 1v1 wins on each map (ties share
-- a place), beside their place among all of the map's civilizations by
-- games (a window function over an aggregate: RANK and DENSE_RANK
-- OVER (PARTITION BY ... ORDER BY ...), filtered in an outer query).
SELECT map, civ, wins, games, win_place, games_place
FROM (
    SELECT m.map, p.civ,
           COUNT(*) FILTER (WHERE p.winner) AS wins,
           COUNT(*) AS games,
           RANK() OVER (PARTITION BY m.map ORDER BY COUNT(*) FILTER (WHERE p.winner) DESC) AS win_place,
           DENSE_RANK() OVER (PARTITION BY m.map ORDER BY COUNT(*) DESC) AS games_place
    FROM match_players AS p
    JOIN matches AS m ON p.match = m.token
    WHERE m.ladder = 'RM_1v1' AND p.civ <> ''
    GROUP BY m.map, p.civ
) AS ranked
WHERE win_place <= 3
ORDER BY map, win_place, civ
