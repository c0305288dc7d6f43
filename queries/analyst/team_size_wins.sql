-- Wins per team number and team size in team ladders (CAST of a text
-- column to numeric, ::, a subquery in FROM grouped again).
SELECT t.team_no, t.team_size, COUNT(*) AS teams, COUNT(*) FILTER (WHERE t.winners > 0) AS won
FROM (
    SELECT p.match, CAST(p.team AS numeric) AS team_no, COUNT(*) AS team_size, COUNT(*) FILTER (WHERE p.winner) AS winners
    FROM match_players AS p
    GROUP BY p.match, CAST(p.team AS numeric)
) AS t
WHERE t.team_no BETWEEN 1 AND 2
GROUP BY 1, 2
ORDER BY 1, 2
