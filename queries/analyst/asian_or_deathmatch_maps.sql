-- The maps and servers of matches on the Asian servers or of death match
-- ladders, each pair once (UNION, LIKE).
SELECT map, server FROM matches WHERE server IN ('koreacentral', 'southeastasia', 'westindia')
UNION
SELECT map, server FROM matches WHERE ladder LIKE 'DM%'
ORDER BY 2, 1
