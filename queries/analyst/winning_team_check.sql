-- Players on the team matches.csv names the winner, per ladder, against
-- their own winner flag (a join on two keys: match and team).
SELECT m.ladder,
       COUNT(*) AS on_winning_team,
       COUNT(*) FILTER (WHERE p.winner) AS flagged_won,
       COUNT(*) FILTER (WHERE NOT p.winner) AS flagged_lost
FROM match_players AS p
JOIN matches AS m ON m.token = p.match AND m.winning_team = p.team
GROUP BY m.ladder
ORDER BY on_winning_team DESC, m.ladder
