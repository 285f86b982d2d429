package storage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jmoiron/sqlx"
)

// migrationFS holds the schema, one numbered file per version.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// applicationID marks a hermes-emulator database in the SQLite header
// (PRAGMA application_id), so that --db never writes into someone else's file.
// It is "HRMS" in ASCII.
const applicationID = 0x48524D53

// migration is one numbered schema step.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// loadMigrations reads the embedded files. Names must be NNNN_name.sql and the
// versions must run 1, 2, 3… without gaps or repeats.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("storage: read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			return nil, fmt.Errorf("storage: bad migration name %q (want NNNN_name.sql)", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("storage: read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("storage: migration %s: want version %d", m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("storage: no migrations")
	}
	return ms, nil
}

// migrate brings the schema to the latest version in one immediate transaction
// and reports whether the database already carried the schema (version ≥ 1).
//
// The version lives in PRAGMA user_version, which is part of the database
// header and therefore changes atomically with the DDL. A database newer than
// this build, or a non-empty database that is not ours, is refused untouched.
func migrate(ctx context.Context, x *sqlx.DB, ms []migration) (existed bool, err error) {
	err = inTx(ctx, x, "migrate", func(tx *sqlx.Tx) error {
		var version, appID, objects int
		if err := tx.GetContext(ctx, &version, "PRAGMA user_version"); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &appID, "PRAGMA application_id"); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &objects, "SELECT count(*) FROM sqlite_schema"); err != nil {
			return err
		}
		switch {
		case appID != 0 && appID != applicationID:
			return fmt.Errorf("%w: application_id %#x", ErrForeign, appID)
		case appID == 0 && (version != 0 || objects != 0):
			return fmt.Errorf("%w: a non-empty database without the hermes-emulator mark", ErrForeign)
		case version > len(ms):
			return fmt.Errorf("database schema version %d is newer than this build (%d)", version, len(ms))
		}
		existed = version >= 1
		if version == len(ms) && appID == applicationID {
			return nil // up to date: no write at all
		}
		for _, m := range ms[version:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		// PRAGMA arguments cannot be bound; both values are integers we own.
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(len(ms))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.Itoa(applicationID))
		return err
	})
	return existed, err
}
