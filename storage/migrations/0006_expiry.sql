-- 0006: a keyed admission prunes the expired terminal reservations of its namespace (runs-api
-- §11.3) in one statement, without reading them (Expiry): each row says whether its record's
-- status is terminal, and a prune marks the rows it removes. A marked row is still read by the
-- process that marked it (a checkpoint from before the prune may see it) and deleted at the next
-- start-up (DropExpired). The rows written before this version get their flag from their record:
-- every record the emulator writes is JSON SQLite reads (JSON5 for the bare Infinity tokens,
-- nested at most 1000 deep); one it could not read would count as unfinished.
ALTER TABLE reservations ADD COLUMN terminal INTEGER NOT NULL DEFAULT 0 CHECK (terminal IN (0, 1));
ALTER TABLE reservations ADD COLUMN expired INTEGER NOT NULL DEFAULT 0 CHECK (expired IN (0, 1));
UPDATE reservations SET terminal = 1
	WHERE json_valid(record, 2) AND json_extract(record, '$.status') IN ('completed', 'failed', 'cancelled', 'interrupted');
-- The rows a prune may still take, by age, with their keys and run counters (TerminalIn reads
-- only this index; a restarted process tells the rows it wrote itself from the rows the file held
-- at start-up by run_n: a run it admitted has a run_n above the namespace's run_counter at
-- start-up, package state, disk.go); it replaces 0005's index of every row by age.
DROP INDEX reservations_updated;
CREATE INDEX reservations_expiring ON reservations (namespace, updated_at, scope, idem_key, run_n)
	WHERE terminal = 1 AND expired = 0;
CREATE INDEX reservations_expired ON reservations (namespace) WHERE expired = 1;
