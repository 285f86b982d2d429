-- 0007: a restarted process tells the rows it wrote itself from the rows the file held when it
-- started by the run counter: a run it admitted has a run_n above the namespace's run_counter
-- at start-up (package state, disk.go), so it keeps nothing in memory for the keys it writes.
-- TerminalIn reads run_n too, still from this index alone: it replaces 0006's.
DROP INDEX reservations_expiring;
CREATE INDEX reservations_expiring ON reservations (namespace, updated_at, scope, idem_key, run_n)
	WHERE terminal = 1 AND expired = 0;
