-- 0001: the durable mirror of each namespace (runs-api §7, §10.4, §12; controls.md §5).
-- Only what upstream keeps durable lives here: reservations with their durable record
-- copy, the per-namespace counters and scope setting, and the global clock.

CREATE TABLE namespaces (
	name             TEXT    NOT NULL PRIMARY KEY CHECK (length(name) > 0),
	run_counter      INTEGER NOT NULL CHECK (run_counter >= 0),
	approval_counter INTEGER NOT NULL CHECK (approval_counter >= 0),
	-- '' and '' = the default scope; a set scope has both parts (controls.md §11.6).
	scope_profile    TEXT    NOT NULL,
	scope_identity   TEXT    NOT NULL,
	CHECK ((scope_profile = '') = (scope_identity = ''))
);

CREATE TABLE reservations (
	namespace   TEXT    NOT NULL CHECK (length(namespace) > 0),
	scope       TEXT    NOT NULL CHECK (length(scope) > 0),
	idem_key    TEXT    NOT NULL CHECK (length(idem_key) > 0),
	fingerprint TEXT    NOT NULL CHECK (length(fingerprint) > 0),
	run_id      TEXT    NOT NULL CHECK (length(run_id) > 0),
	owner_scope TEXT    NOT NULL CHECK (length(owner_scope) > 0),
	keyed       INTEGER NOT NULL CHECK (keyed IN (0, 1)),
	local       INTEGER NOT NULL CHECK (local IN (0, 1)),
	alive       INTEGER NOT NULL CHECK (alive IN (0, 1)),
	-- The durable record copy: JSON text kept byte for byte (it may hold the bare
	-- tokens Infinity/-Infinity, wire.md §3, so it is not checked with json_valid).
	record      BLOB    NOT NULL CHECK (length(record) > 0),
	-- binary64 seconds (runs-api §11.3 compares them exactly as written).
	updated_at  REAL    NOT NULL,
	PRIMARY KEY (namespace, scope, idem_key)
);

-- Hydration finds "the reservation whose run id is id" (runs-api §10.1): one run has at
-- most one reservation, so the index is unique.
CREATE UNIQUE INDEX reservations_run ON reservations (namespace, run_id);

-- One global clock (controls.md §5); the single row has id 1.
CREATE TABLE clock (
	id        INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
	frozen    INTEGER NOT NULL CHECK (frozen IN (0, 1)),
	frozen_ms REAL    NOT NULL,
	offset_ms REAL    NOT NULL
);
