package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// sqliteMagic opens every SQLite database file (the first 16 header bytes).
const sqliteMagic = "SQLite format 3\x00"

// Preflight checks a --db path before anything is opened, created or written
// next to it (hardening H8): Open calls it first, and so does a caller that
// takes a lock file beside the database. It only reads. Refused:
//
//   - a path whose directory is missing → `storage: open <path>: the directory
//     <dir> does not exist`;
//   - a path that is not a regular file;
//   - a non-empty file that is not a SQLite database, a SQLite database marked
//     by another application (application_id), or a non-empty database
//     without our mark → ErrForeign;
//   - our database with a schema newer than this build.
//
// A missing or empty file is a new database. The header's page 1 is taken from
// the write-ahead log when one is beside the file (a database whose first
// transactions were never checkpointed into it, after a crash).
func Preflight(path string) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("storage: open %s: "+format, append([]any{path}, a...)...)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail("the directory %s does not exist", dir)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fail("%w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fail("not a regular file")
	}
	page1 := make([]byte, 108)
	n, err := io.ReadFull(f, page1)
	switch {
	case n == 0:
		return nil // an empty file is a new database
	case err != nil || string(page1[:16]) != sqliteMagic:
		return fail("%w: not a SQLite database file", ErrForeign)
	}
	if p, err := walPage1(path + "-wal"); err != nil {
		return fail("%w", err)
	} else if p != nil {
		page1 = p
	}
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return err
	}
	appID := binary.BigEndian.Uint32(page1[68:72])
	version := binary.BigEndian.Uint32(page1[60:64])
	// An empty schema: page 1 is a table leaf (0x0D) without cells.
	empty := page1[100] == 0x0D && binary.BigEndian.Uint16(page1[103:105]) == 0
	switch {
	case appID != 0 && appID != applicationID:
		return fail("%w: application_id %#x", ErrForeign, appID)
	case appID == 0 && (version != 0 || !empty):
		return fail("%w: a non-empty database without the hermes-emulator mark", ErrForeign)
	case int(version) > len(ms):
		return fail("database schema version %d is newer than this build (%d)", version, len(ms))
	}
	return nil
}

// walPage1 returns the first 108 bytes of page 1 as the write-ahead log at
// path gives it, read the way SQLite reads a log (the WAL format,
// https://www.sqlite.org/fileformat2.html#walformat): the last copy of page 1
// in a committed transaction, where a frame counts only when it names a page,
// carries the log's salts and continues its checksum chain, and the log ends
// at the first frame that does not. nil when there is no log or no committed copy. A torn
// frame left by a crash mid-write (kill -9) is past the end, not page 1.
func walPage1(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var hdr [32]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, nil // empty or torn: SQLite ignores such a log
	}
	be := binary.BigEndian
	magic := be.Uint32(hdr[0:4])
	if magic != 0x377f0682 && magic != 0x377f0683 {
		return nil, nil
	}
	// The checksums read the log in the byte order its magic names.
	var order binary.ByteOrder = binary.LittleEndian
	if magic == 0x377f0683 {
		order = binary.BigEndian
	}
	pageSize := int(be.Uint32(hdr[8:12])) // written as is, 65536 too (unlike the database header)
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, nil
	}
	s0, s1 := walChecksum(order, 0, 0, hdr[:24])
	if s0 != be.Uint32(hdr[24:28]) || s1 != be.Uint32(hdr[28:32]) {
		return nil, nil
	}
	var last, pending []byte // page 1 as committed, and as written since the last commit
	frame := make([]byte, 24+pageSize)
	for {
		if _, err := io.ReadFull(r, frame); err != nil {
			return last, nil
		}
		s0, s1 = walChecksum(order, s0, s1, frame[:8])
		s0, s1 = walChecksum(order, s0, s1, frame[24:])
		if be.Uint32(frame[0:4]) == 0 || string(frame[8:16]) != string(hdr[16:24]) ||
			s0 != be.Uint32(frame[16:20]) || s1 != be.Uint32(frame[20:24]) {
			return last, nil
		}
		if be.Uint32(frame[0:4]) == 1 {
			pending = append(pending[:0], frame[24:24+108]...)
		}
		if be.Uint32(frame[4:8]) != 0 && pending != nil { // a commit frame
			last = slices.Clone(pending)
		}
	}
}

// walChecksum continues the WAL checksum (s0, s1) over b, a multiple of 8
// bytes read as 32-bit words in order.
func walChecksum(order binary.ByteOrder, s0, s1 uint32, b []byte) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
