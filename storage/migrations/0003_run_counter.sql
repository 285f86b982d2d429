-- 0003: each reservation keeps its run's counter n (runs-api §12.1). Run ids repeat within a
-- namespace (0002), and the newer run answers for a shared id; after a real restart the
-- reservations are replayed by counter so it still does. Rows written before have 0.
ALTER TABLE reservations ADD COLUMN run_n INTEGER NOT NULL DEFAULT 0 CHECK (run_n >= 0);
