-- The counting rule online, as in the note on counting rules over spatio-temporal
-- streams: each new event drops the expired events and their patterns, finds its
-- neighbours among the live events (GiST-indexed), reports every live L2 pattern
-- both of whose events are its neighbours (the new L3 sets), and adds its own L2
-- patterns. Replayed event by event inside PL/pgSQL, so no client round trip is
-- counted.
\set ON_ERROR_STOP on
DROP TABLE IF EXISTS live, live_l2, l3_online;
CREATE TABLE live (id int PRIMARY KEY, t bigint NOT NULL, g geography(Point, 4326) NOT NULL);
CREATE INDEX live_g ON live USING gist (g);
CREATE INDEX live_t ON live (t);
CREATE TABLE live_l2 (i int NOT NULL, j int NOT NULL, PRIMARY KEY (i, j));
CREATE INDEX live_l2_j ON live_l2 (j);
CREATE TABLE l3_online (a int, b int, c int);

CREATE OR REPLACE FUNCTION on_event(eid int, et bigint, eg geography)
RETURNS TABLE (a int, b int, c int) LANGUAGE plpgsql AS $f$
DECLARE
    gone int[];
    near int[];
BEGIN
    gone := ARRAY(SELECT id FROM live WHERE t < et - 3600000000);
    IF cardinality(gone) > 0 THEN
        DELETE FROM live_l2 WHERE i = ANY (gone) OR j = ANY (gone);
        DELETE FROM live WHERE id = ANY (gone);
    END IF;
    near := ARRAY(SELECT id FROM live
                  WHERE ST_DWithin(live.g, eg, 500.0) AND ST_Distance(live.g, eg) < 500.0);
    RETURN QUERY SELECT p.i, p.j, eid FROM live_l2 p
                 WHERE p.i = ANY (near) AND p.j = ANY (near);
    INSERT INTO live_l2 SELECT n, eid FROM unnest(near) n;
    INSERT INTO live VALUES (eid, et, eg);
END $f$;

DO $$
DECLARE
    started timestamptz := clock_timestamp();
    r record;
    events bigint := 0;
    secs numeric;
BEGIN
    FOR r IN SELECT id, t, g FROM ev ORDER BY t, id LOOP
        INSERT INTO l3_online SELECT * FROM on_event(r.id, r.t, r.g);
        events := events + 1;
    END LOOP;
    secs := extract(epoch FROM clock_timestamp() - started)::numeric;
    RAISE NOTICE 'online: % events, % sets in % s (% events/s)', events,
        (SELECT count(*) FROM l3_online), round(secs, 3), round(events / secs);
END $$;
