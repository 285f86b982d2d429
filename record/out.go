package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tempPattern names the temporary file a flush writes beside --out before it
// renames it to --out.
const tempPattern = ".record-*.yaml"

// checkOut refuses, without writing anything, an --out whose directory is
// missing or not a directory, and an --out that is a directory: the file is
// written only at a flush, so the whole recording would be lost.
func checkOut(out string) error {
	dir := filepath.Dir(out)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("record: --out %s: the directory %s does not exist", out, dir)
	case err != nil:
		return fmt.Errorf("record: --out %s: the directory %s: %v", out, dir, reason(err))
	case !fi.IsDir():
		return fmt.Errorf("record: --out %s: %s is not a directory", out, dir)
	case isDir(out):
		return fmt.Errorf("record: --out %s: is a directory, not a file", out)
	}
	return nil
}

// probeOut does at start what a flush does at the end, so that an --out the
// recorder cannot write is found before anything is recorded: it creates a
// temporary file in out's directory (a directory without write permission, a
// read-only file system) and, when out does not exist yet, out itself (a name
// the file system refuses, such as one too long); it removes both at once, so
// the check leaves nothing behind. An existing out is not touched: the rename
// of a flush replaces it whatever its permissions.
func probeOut(out string) error {
	if target, err := filepath.EvalSymlinks(out); err == nil {
		if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
			return nil // written in place (writeOut): nothing to create
		}
		out = target
	}
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return fmt.Errorf("record: --out %s: cannot create a file in %s: %v", out, dir, reason(err))
	}
	tmp.Close()
	os.Remove(tmp.Name())
	if _, err := os.Lstat(out); err == nil {
		return nil
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("record: --out %s: cannot create the file: %v", out, reason(err))
	}
	f.Close()
	os.Remove(out)
	return nil
}

// writeOut replaces the file out by data atomically: a temporary file in the
// same directory, renamed to out. A symbolic link is followed (the link stays,
// its target is replaced) and an existing file keeps its mode (a new one is
// 0644). What is not a regular file (/dev/stdout, a pipe) is written in place.
func writeOut(out string, data []byte) error {
	mode := fs.FileMode(0o644)
	if target, err := filepath.EvalSymlinks(out); err == nil {
		out = target
		if fi, err := os.Stat(out); err == nil {
			if !fi.Mode().IsRegular() {
				return wrapWrite(out, os.WriteFile(out, data, 0o644))
			}
			mode = fi.Mode().Perm()
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), tempPattern)
	if err != nil {
		return wrapWrite(out, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return wrapWrite(out, err)
}

func wrapWrite(out string, err error) error {
	if err != nil {
		return fmt.Errorf("record: write %s: %w", out, err)
	}
	return nil
}

// reason is the operating system's reason of a file error ("permission
// denied"), without the operation and path the message already names.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isDir reports whether path names an existing directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
