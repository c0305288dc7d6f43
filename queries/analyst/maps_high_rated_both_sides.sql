-- The maps played above 1800 on both sides of the Atlantic (INTERSECT).
SELECT map FROM matches WHERE server = 'westeurope' AND average_rating > 1800
INTERSECT
SELECT map FROM matches WHERE server = 'eastus' AND average_rating > 1800
ORDER BY map
