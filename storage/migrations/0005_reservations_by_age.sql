-- 0005: a keyed admission prunes the expired terminal reservations of its namespace
-- (runs-api §11.3), also those a restarted process has not read yet: it reads the rows
-- updated before the prune's bound through this index instead of the whole table.
CREATE INDEX reservations_updated ON reservations (namespace, updated_at);
