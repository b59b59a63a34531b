package sqlitestore

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// SQL functions the store's queries call, registered with the driver once
// per process, before the store's first connection opens:
//
//   - vigil_lower(text) is Go's strings.ToLower (SQLite's lower() folds
//     ASCII only), so that the monitor list's text filter folds case as
//     Unicode does;
//   - vigil_row_version(values...) is a 64-bit hash of its arguments, their
//     types included: a monitor row's version (MonitorListPage), given all
//     its columns (rowVersionCols). Any change of any column changes it
//     but for a collision of 64-bit hashes.
var (
	registerOnce sync.Once
	registerErr  error
	rowSeed      = maphash.MakeSeed()
)

func registerFuncs() error {
	registerOnce.Do(func() {
		if err := sqlite.RegisterFunction("vigil_lower", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
			Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				if s, ok := args[0].(string); ok {
					return strings.ToLower(s), nil
				}
				return args[0], nil
			}}); err != nil {
			registerErr = fmt.Errorf("register vigil_lower: %w", err)
			return
		}
		if err := sqlite.RegisterFunction("vigil_row_version", &sqlite.FunctionImpl{NArgs: -1, Deterministic: true, VolatileArgs: true,
			Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				return strconv.FormatUint(rowHash(args), 16), nil
			}}); err != nil {
			registerErr = fmt.Errorf("register vigil_row_version: %w", err)
		}
	})
	return registerErr
}

// rowHash hashes values with their types, each value delimited, so that
// no two different rows of one table hash alike but by chance.
func rowHash(args []driver.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(rowSeed)
	var buf [9]byte
	for _, a := range args {
		switch v := a.(type) {
		case nil:
			h.WriteByte(0) //nolint:errcheck // a hash never fails
		case int64:
			buf[0] = 1
			binary.LittleEndian.PutUint64(buf[1:], uint64(v))
			h.Write(buf[:]) //nolint:errcheck // a hash never fails
		case float64:
			buf[0] = 2
			binary.LittleEndian.PutUint64(buf[1:], math.Float64bits(v))
			h.Write(buf[:]) //nolint:errcheck // a hash never fails
		case string:
			buf[0] = 3
			binary.LittleEndian.PutUint64(buf[1:], uint64(len(v)))
			h.Write(buf[:])  //nolint:errcheck // a hash never fails
			h.WriteString(v) //nolint:errcheck // a hash never fails
		case []byte:
			buf[0] = 4
			binary.LittleEndian.PutUint64(buf[1:], uint64(len(v)))
			h.Write(buf[:]) //nolint:errcheck // a hash never fails
			h.Write(v)      //nolint:errcheck // a hash never fails
		default:
			// Any other type the driver hands over (a time, a bool):
			// its text.
			s := fmt.Sprint(v)
			buf[0] = 5
			binary.LittleEndian.PutUint64(buf[1:], uint64(len(s)))
			h.Write(buf[:])  //nolint:errcheck // a hash never fails
			h.WriteString(s) //nolint:errcheck // a hash never fails
		}
	}
	return h.Sum64()
}
