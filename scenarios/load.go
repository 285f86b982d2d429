package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileBytes bounds a scenario file read by Load.
const MaxFileBytes = 10 << 20

// Load reads and validates the scenario file at path (serve --scenarios). The
// error is one line naming the file and the first bad field by path, e.g.
// "s.yaml: scenarios[0].steps[2].observe: result fields require completed status".
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", path)
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFileBytes)
	}
	set, perr := Parse(data)
	if perr != nil {
		return nil, fmt.Errorf("%s: %s", path, perr.Message)
	}
	return set, nil
}
