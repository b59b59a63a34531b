package sqlitestore

import (
	"context"
	"database/sql"
)

// The bounds of the PASSIVE checkpoints run before a RESTART one.
const (
	CatchUpRounds = catchUpRounds
	CatchUpFrames = catchUpFrames
)

// Path returns the file s was opened on.
func Path(s *Store) string { return s.path }

// Writer returns the writer connection, for tests that check what the
// database itself enforces.
func Writer(s *Store) *sql.DB { return s.w }

// Checkpoint runs one checkpoint as the store's timer does and returns the
// frames in the WAL and whether it made the WAL start over.
func Checkpoint(s *Store) (frames int, restarted bool, err error) {
	r, err := s.ckpt.checkpoint(context.Background())
	return r.Frames, r.Restarted, err
}

// CheckpointRounds runs one checkpoint as Checkpoint does and returns how
// many PASSIVE checkpoints ran, the frames the last of them copied, and
// whether a RESTART one ran and was kept from finishing.
func CheckpointRounds(s *Store) (passive, copied int, restarted, busy bool, err error) {
	r, err := s.ckpt.checkpoint(context.Background())
	return r.Passive, r.Copied, r.Restarted, r.Busy, err
}

// CheckpointResult is what one checkpoint did.
type CheckpointResult = checkpointResult

// RunCheckpoint runs one checkpoint as the store's timer does.
func RunCheckpoint(s *Store) (CheckpointResult, error) {
	return s.ckpt.checkpoint(context.Background())
}

// SetWALSizeLimit sets the WAL file size past which a checkpoint cuts a
// file that the WAL fills less than a quarter of.
func SetWALSizeLimit(s *Store, n int64) { s.ckpt.sizeLimit = n }

// SetRestartFrames sets the WAL size, in frames, past which a checkpoint
// makes the WAL start over.
func SetRestartFrames(s *Store, n int) { s.ckpt.restartFrames = n }

// CachedStatements returns how many statements the reader and the writer
// keep prepared.
func CachedStatements(s *Store) (reader, writer int) {
	return s.rStmts.stmts.Len(), s.wStmts.stmts.Len()
}

// RowVersionCols are the columns a monitor row's version hashes.
const RowVersionCols = rowVersionCols

// QRunPruned counts one pruning of a monitor's runs.
const QRunPruned = qRunPruned

// Chunks splits n rows into the statement sizes of a bulk statement.
func Chunks(n int) []int { return chunks(n) }

// BulkSizes are the row counts a bulk statement is prepared for.
func BulkSizes() []int { return bulkSizes() }
