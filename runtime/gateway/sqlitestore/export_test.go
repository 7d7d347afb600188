package sqlitestore

import "github.com/toolgate/toolgate/internal/sqliteutil"

// WriterStats reports the group-commit writer's batches and writes, for
// the benchmarks' writes-per-transaction figure.
func WriterStats(s *Store) sqliteutil.WriterStats { return s.w.Stats() }
