package sqliteutil

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Writes queued while a transaction runs share the next one, and Stats
// counts them: one blocked batch, ten writes behind it, two transactions
// for eleven writes; then sequential writes are one transaction each.
func TestWriterBatchesQueuedWrites(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w := NewWriter(db, 0, &BatchHooks{Begin: func(context.Context, *Tx) error {
		once.Do(func() { close(entered); <-release })
		return nil
	}})
	defer w.Close()
	insert := func(k int) error {
		_, err := w.Exec(ctx, "INSERT INTO t(k) VALUES (?)", k)
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 11)
	wg.Go(func() { errs[0] = insert(0) })
	<-entered
	for i := 1; i < len(errs); i++ {
		wg.Go(func() { errs[i] = insert(i) })
	}
	for w.q.Len() < len(errs)-1 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d = %v", i, err)
		}
	}
	if got := w.Stats(); got != (WriterStats{Batches: 2, Writes: 11}) {
		t.Errorf("Stats = %+v, want 2 transactions for 11 writes", got)
	}
	for k := 100; k < 105; k++ {
		if err := insert(k); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.Stats(); got != (WriterStats{Batches: 7, Writes: 16}) {
		t.Errorf("Stats after 5 sequential writes = %+v, want 7 transactions for 16 writes", got)
	}
	var n int
	if err := db.R.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 16 {
		t.Errorf("rows = %d, %v; want 16", n, err)
	}
}
