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
//     its columns (rowVersionCols);
//   - vigil_marker(values...) is the aggregate of vigil_row_version over
//     rows, "count.sum" with the sum wrapping: the monitor list's marker.
//     Any change of any column of any row, an insert or a delete changes
//     it but for a collision of 64-bit hashes.
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
			return
		}
		if err := sqlite.RegisterFunction("vigil_marker", &sqlite.FunctionImpl{NArgs: -1, Deterministic: true, VolatileArgs: true,
			MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &marker{}, nil }}); err != nil {
			registerErr = fmt.Errorf("register vigil_marker: %w", err)
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

// marker is vigil_marker's state.
type marker struct {
	n   int64
	sum uint64
}

func (m *marker) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	m.n++
	m.sum += rowHash(args)
	return nil
}

func (m *marker) WindowInverse(_ *sqlite.FunctionContext, args []driver.Value) error {
	m.n--
	m.sum -= rowHash(args)
	return nil
}

func (m *marker) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	return strconv.FormatInt(m.n, 10) + "." + strconv.FormatUint(m.sum, 16), nil
}

func (m *marker) Final(*sqlite.FunctionContext) {}
