-- 0002: a run id may have two reservations. Run ids are a function of a 32-bit hash of
-- (storage namespace, counter) (runs-api §12.1), so two runs of one namespace can share one
-- (in namespace default, runs 139,463 and 1,002,500 are the first pair): the unique
-- index made the newer run's keyed admission fail. The store is never searched by run id
-- (the gateway keeps that index in memory), so the index goes.
DROP INDEX reservations_run;
