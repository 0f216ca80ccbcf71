-- The counting rule as a batch over the stored stream, level by level as in the note
-- on counting rules over spatio-temporal streams: L2 is every pair of events closer
-- than the distance and within the window (a GiST-indexed geography join), L3 every
-- pair of L2 patterns sharing one event whose two other events are an L2 pattern.
-- Pairwise time differences <= window make the set fit the window.
\set ON_ERROR_STOP on
DO $$
DECLARE
    started timestamptz := clock_timestamp();
    sets bigint;
BEGIN
    DROP TABLE IF EXISTS l2, l3_batch;
    CREATE TABLE l2 AS
        SELECT a.id AS i, b.id AS j
        FROM ev a JOIN ev b
          ON a.id < b.id
         AND b.t - a.t BETWEEN -3600000000 AND 3600000000
         AND ST_DWithin(a.g, b.g, 500.0)
         AND ST_Distance(a.g, b.g) < 500.0;
    ALTER TABLE l2 ADD PRIMARY KEY (i, j);
    CREATE TABLE l3_batch AS
        SELECT x.i AS a, x.j AS b, y.j AS c
        FROM l2 x
        JOIN l2 y ON y.i = x.i AND y.j > x.j
        JOIN l2 z ON z.i = x.j AND z.j = y.j;
    SELECT count(*) INTO sets FROM l3_batch;
    RAISE NOTICE 'batch: % sets in % s', sets,
        round(extract(epoch FROM clock_timestamp() - started)::numeric, 3);
END $$;
