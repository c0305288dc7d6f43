-- Every pair of a ladder and a map size (the grid a report fills in),
-- named, with the ladder's kind after its "_" and the size's first
-- letters.
WITH ladders AS (SELECT ladder FROM matches GROUP BY ladder),
     sizes AS (SELECT map_size FROM matches GROUP BY map_size)
SELECT l.ladder,
       s.map_size,
       CONCAT(l.ladder, '/', s.map_size) AS name,
       SPLIT_PART(l.ladder, '_', -1) AS kind,
       LEFT(s.map_size, 3) AS short,
       LEAST(LENGTH(l.ladder), LENGTH(s.map_size)) AS shorter
FROM ladders AS l, sizes AS s
ORDER BY l.ladder, s.map_size
