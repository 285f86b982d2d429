-- 0004: reservations are read on demand (a restart no longer loads them all): hydration
-- finds "the reservation whose run id is id" (runs-api §10.1), the newest run first when
-- ids repeat (0002), through this index.
CREATE INDEX reservations_run ON reservations (namespace, run_id, run_n);
