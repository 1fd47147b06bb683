package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/perfgate/perfgate/internal/jsontext"
)

// lookup runs a small query in one round trip (parse, bind and execute
// sent together) rather than preparing it first, as pgx does by default
// to reuse the statement: a command runs each of these once, and on a
// loaded machine every round trip waits for the server to be scheduled.
// The parameters' types come from their Go types (string: text).
const lookup = pgx.QueryExecModeExec

// runColumns are perfgate_runs' columns of a run, in the order of
// runValues and scanRun.
var runColumns = []string{"repository", "commit", "id", "benchmark", "time_ns", "metrics", "labels",
	"source_format", "source_file", "source_line", "command", "exit_code", "dirty", "invalid", "testbed", "env", "tree", "requests"}

// selectRun selects a run's seq and columns (without the repository).
var selectRun = "SELECT seq, " + strings.Join(runColumns[1:], ", ") + " FROM perfgate_runs"

// runValues returns the column values of a run. The JSON columns are
// encoded here, as JSONL does, rather than by encoding/json's reflection,
// with the keys in map order: jsonb orders them itself.
func runValues(repo string, r *Run) []any {
	var env []byte
	if r.Env != nil {
		env = appendJSONB(nil, r.Env, jsontext.AppendString)
	}
	var reqs *string
	if len(r.Requests) > 0 {
		s := string(r.Requests)
		reqs = &s
	}
	return []any{repo, r.Commit, r.ID, r.Benchmark, r.Time.UnixNano(), appendJSONB(nil, r.Metrics, appendNumber), appendJSONB(nil, r.Labels, jsontext.AppendString),
		r.Source.Format, r.Source.File, r.Source.Line, r.Command, r.ExitCode, r.Dirty, r.Invalid, r.Testbed, env, r.Tree, reqs}
}

// appendJSONB appends m as a JSON object for a jsonb column, its keys in
// map order.
func appendJSONB[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsontext.AppendString(b, k)
		b = append(b, ':')
		b = value(b, v)
	}
	return append(b, '}')
}

// setRequests sets a run's request summary from its column (NULL: none).
func setRequests(r *Run, col *string) {
	if col != nil {
		r.Requests = []byte(*col)
	}
}

// scanRun reads a row of selectRun. names, when not nil, keeps one copy
// of each metric and label name and label value across the rows of a
// query (they repeat in every run), as the JSONL parser does.
func scanRun(row pgx.Row, names map[string]string) (uint64, Run, error) {
	var (
		r                    Run
		seq, ns              int64
		metrics, labels, env []byte
		reqs                 *string
	)
	err := row.Scan(&seq, &r.Commit, &r.ID, &r.Benchmark, &ns, &metrics, &labels,
		&r.Source.Format, &r.Source.File, &r.Source.Line, &r.Command, &r.ExitCode, &r.Dirty, &r.Invalid, &r.Testbed, &env, &r.Tree, &reqs)
	if err != nil {
		return 0, Run{}, err
	}
	setRequests(&r, reqs)
	if err := fillRun(&r, ns, metrics, labels, env, names); err != nil {
		return uint64(seq), Run{}, &badRowError{seq: seq, id: r.ID, err: err}
	}
	// A row is read as a line of the history branch is: validated, so
	// that a run no perfgate would have stored (an empty commit, a
	// control character in a name) never reaches a report.
	if !isRunID(r.ID) {
		return uint64(seq), Run{}, &badRowError{seq: seq, id: r.ID, err: fmt.Errorf("id %q is not a perfgate run id", r.ID)}
	}
	if err := validate(&r); err != nil {
		return uint64(seq), Run{}, &badRowError{seq: seq, id: r.ID, err: err}
	}
	return uint64(seq), r, nil
}

// badRowError is a row of perfgate_runs that is no valid run.
type badRowError struct {
	seq int64
	id  string
	err error
}

func (e *badRowError) Error() string {
	return fmt.Sprintf("row seq %d (id %q) of perfgate_runs is no valid run, left out: %v", e.seq, e.id, e.err)
}

// badRows says once each which rows were left out.
type badRows struct {
	warn func(string)
	mu   sync.Mutex
	seen map[string]bool
}

func (b *badRows) note(msg string) {
	if b == nil || b.warn == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[msg] {
		return
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[msg] = true
	b.warn(msg)
}

// query calls fn with each run a query selects (selectRun + where).
func (s *pgStore) query(op, where string, args []any, fn func(seq uint64, r Run) error) error {
	ctx := context.Background()
	rows, err := s.pool.Query(ctx, selectRun+" "+where, args...)
	if err != nil {
		return s.fail(op, err)
	}
	defer rows.Close()
	names := map[string]string{}
	for rows.Next() {
		seq, r, err := scanRun(rows, names)
		var bad *badRowError
		if errors.As(err, &bad) {
			s.bad.note(fmt.Sprintf("history database %s, repository %q: %s", s.display, s.repo, scrub(bad.Error(), s.secret)))
			continue
		}
		if err != nil {
			return s.fail(op, err)
		}
		if err := fn(seq, r); err != nil {
			return err
		}
	}
	return s.fail(op, rows.Err())
}

// Put stores runs in one transaction: all of them or none.
func (s *pgStore) Put(runs []Run) (added int, err error) {
	if s.readOnly {
		return 0, s.readOnlyErr()
	}
	now := s.now()
	for i := range runs {
		if err := prepare(&runs[i], now); err != nil {
			return 0, runError(runs, i, err)
		}
	}
	err = s.write("store runs", func(ctx context.Context, tx pgx.Tx) error {
		var err error
		added, err = s.putTx(ctx, tx, runs, func(i int, err error) error { return runError(runs, i, err) })
		return err
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// clock is the store's time source (Put stamps runs without a time).
func (s *pgStore) clock() time.Time { return s.now() }

// MergeValid is Merge for runs ParseValid checked already.
func (s *pgStore) MergeValid(runs []Valid, bad func(i int, err error)) (added int, err error) {
	if s.readOnly {
		return 0, s.readOnlyErr()
	}
	idx := make([]int, 0, len(runs))
	batch := make([]Run, 0, len(runs))
	for i := range runs {
		if runs[i].run.ID != "" {
			idx = append(idx, i)
			batch = append(batch, runs[i].run)
		}
	}
	var rejected []int
	var rejectedErr []error
	err = s.write("store runs", func(ctx context.Context, tx pgx.Tx) error {
		rejected, rejectedErr = rejected[:0], rejectedErr[:0]
		var err error
		added, err = s.putTx(ctx, tx, batch, func(i int, err error) error {
			rejected, rejectedErr = append(rejected, idx[i]), append(rejectedErr, err)
			return nil
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	for j, i := range rejected {
		bad(i, rejectedErr[j])
	}
	return added, nil
}

// putTx stores prepared runs in tx unless stored already. A run whose id
// is stored with different content goes to conflict, which may end the
// transaction by returning an error. Concurrent writers of the same run
// store it once (the unique key, ON CONFLICT DO NOTHING).
func (s *pgStore) putTx(ctx context.Context, tx pgx.Tx, runs []Run, conflict func(i int, err error) error) (int, error) {
	if len(runs) == 0 {
		return 0, nil
	}
	commits := make([]string, len(runs))
	ids := make([]string, len(runs))
	for i := range runs {
		commits[i], ids[i] = runs[i].Commit, runs[i].ID
	}
	stored := map[RunKey]Run{}
	rows, err := tx.Query(ctx, selectRun+` WHERE repository = $1 AND (commit, id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`, s.repo, commits, ids)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		_, r, err := scanRun(rows, nil)
		var bad *badRowError
		if errors.As(err, &bad) {
			err = corruptf("%v", bad)
		}
		if err != nil {
			rows.Close()
			return 0, err
		}
		stored[RunKey{r.Commit, r.ID}] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	insert := "INSERT INTO perfgate_runs (" + strings.Join(runColumns, ", ") + ") VALUES (" + placeholders(len(runColumns)) + ") ON CONFLICT (repository, commit, id) DO NOTHING"
	batch := &pgx.Batch{}
	for i := range runs {
		r := &runs[i]
		if old, ok := stored[RunKey{r.Commit, r.ID}]; ok {
			if !equalIdentity(&old, r) {
				if err := conflict(i, idConflict(r.ID, &old)); err != nil {
					return 0, err
				}
			}
			continue
		}
		batch.Queue(insert, runValues(s.repo, r)...)
	}
	if batch.Len() == 0 {
		return 0, nil
	}
	br := tx.SendBatch(ctx, batch)
	added := 0
	for range batch.Len() {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return 0, err
		}
		added += int(tag.RowsAffected())
	}
	return added, br.Close()
}

func idConflict(id string, old *Run) error {
	return badf("run id %s is already stored for this commit with different content (benchmark %q, time %s); ids follow from content, so this id was edited or copied: remove the \"id\" field and perfgate derives one",
		id, old.Benchmark, old.Time.Format(time.RFC3339))
}

func placeholders(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i+1)
	}
	return b.String()
}

// Len returns the number of runs of the repository.
func (s *pgStore) Len() (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM perfgate_runs WHERE repository = $1`, s.repo).Scan(&n)
	return n, s.fail("count runs", err)
}

// ByCommit returns every run of a commit, in time order.
func (s *pgStore) ByCommit(commit string) ([]Run, error) {
	if err := checkCommits([]string{commit}); err != nil {
		return nil, err
	}
	var runs []Run
	err := s.query("read runs", `WHERE repository = $1 AND commit = $2 ORDER BY time_ns, id COLLATE "C"`, []any{s.repo, commit},
		func(_ uint64, r Run) error { runs = append(runs, r); return nil })
	return runs, err
}

// commitSeqs returns the sequence number of every run of a commit, by
// run id.
func (s *pgStore) commitSeqs(commit string) (map[string]uint64, error) {
	if err := checkCommits([]string{commit}); err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	rows, err := s.pool.Query(context.Background(), `SELECT id, seq FROM perfgate_runs WHERE repository = $1 AND commit = $2`, s.repo, commit)
	if err != nil {
		return nil, s.fail("read runs", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, s.fail("read runs", err)
		}
		out[id] = uint64(seq)
	}
	return out, s.fail("read runs", rows.Err())
}

// ByCommits returns the runs of each commit that has any, in time order.
func (s *pgStore) ByCommits(commits []string) (map[string][]Run, error) {
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	out := map[string][]Run{}
	// Sorted here, per commit, rather than by the server: its sort of the
	// whole batch's rows (the metrics' jsonb and all) costs a fifth of
	// the query.
	err := s.query("read runs", `WHERE repository = $1 AND commit = ANY($2)`, []any{s.repo, commits},
		func(_ uint64, r Run) error { out[r.Commit] = append(out[r.Commit], r); return nil })
	sortByTime(out)
	return out, err
}

// sortByTime puts each commit's runs in time order, then by id (bytes),
// as bbolt returns them.
func sortByTime(byCommit map[string][]Run) {
	for _, runs := range byCommit {
		slices.SortFunc(runs, func(a, b Run) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
}

// ByBenchmark returns the runs of one benchmark at each commit that has
// any (all commits when commits is nil), in time order.
func (s *pgStore) ByBenchmark(benchmark string, commits []string) (map[string][]Run, error) {
	if benchmark == "" {
		return nil, badf("the benchmark name is empty; name the benchmark (--name)")
	}
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	out := map[string][]Run{}
	add := func(_ uint64, r Run) error { out[r.Commit] = append(out[r.Commit], r); return nil }
	var err error
	if commits == nil {
		err = s.query("read runs", `WHERE repository = $1 AND benchmark = $2`, []any{s.repo, benchmark}, add)
	} else {
		err = s.query("read runs", `WHERE repository = $1 AND benchmark = $2 AND commit = ANY($3)`, []any{s.repo, benchmark, commits}, add)
	}
	sortByTime(out)
	return out, err
}

// Measured counts the runs of each commit (of one benchmark, or any).
func (s *pgStore) Measured(benchmark string, commits []string) (map[string]int, error) {
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	q := `SELECT commit, count(*) FROM perfgate_runs WHERE repository = $1 AND commit = ANY($2) AND ($3 = '' OR benchmark = $3) GROUP BY commit`
	rows, err := s.pool.Query(context.Background(), q, s.repo, commits, benchmark)
	if err != nil {
		return nil, s.fail("count runs", err)
	}
	out := map[string]int{}
	var c string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&c, &n}, func() error { out[c] = n; return nil })
	return out, s.fail("count runs", err)
}

// Commits returns the commits that have runs (of benchmark, or any), in
// byte order. Like bbolt's, it skips from one commit to the next in an
// index (a recursive query), so its cost grows with the commits, not the
// runs.
func (s *pgStore) Commits(benchmark string) ([]string, error) {
	if benchmark == "" {
		return s.strings("list commits", `WITH RECURSIVE c(commit) AS (
	(SELECT commit FROM perfgate_runs WHERE repository = $1 ORDER BY commit LIMIT 1)
	UNION ALL
	SELECT (SELECT r.commit FROM perfgate_runs r WHERE r.repository = $1 AND r.commit > c.commit ORDER BY r.commit LIMIT 1)
	FROM c WHERE c.commit IS NOT NULL)
SELECT commit FROM c WHERE commit IS NOT NULL`, s.repo)
	}
	return s.strings("list commits", `WITH RECURSIVE c(commit) AS (
	(SELECT commit FROM perfgate_runs WHERE repository = $1 AND benchmark = $2 ORDER BY commit LIMIT 1)
	UNION ALL
	SELECT (SELECT r.commit FROM perfgate_runs r WHERE r.repository = $1 AND r.benchmark = $2 AND r.commit > c.commit ORDER BY r.commit LIMIT 1)
	FROM c WHERE c.commit IS NOT NULL)
SELECT commit FROM c WHERE commit IS NOT NULL`, s.repo, benchmark)
}

// Benchmarks returns the names of the benchmarks that have runs, sorted,
// skipping from one to the next in the series index.
func (s *pgStore) Benchmarks() ([]string, error) {
	out, err := s.strings("list benchmarks", `WITH RECURSIVE b(benchmark) AS (
	(SELECT benchmark FROM perfgate_runs WHERE repository = $1 ORDER BY benchmark LIMIT 1)
	UNION ALL
	SELECT (SELECT r.benchmark FROM perfgate_runs r WHERE r.repository = $1 AND r.benchmark > b.benchmark ORDER BY r.benchmark LIMIT 1)
	FROM b WHERE b.benchmark IS NOT NULL)
SELECT benchmark FROM b WHERE benchmark IS NOT NULL`, s.repo)
	slices.Sort(out)
	return out, err
}

func (s *pgStore) strings(op, q string, args ...any) ([]string, error) {
	rows, err := s.pool.Query(context.Background(), q, append([]any{lookup}, args...)...)
	if err != nil {
		return nil, s.fail(op, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, s.fail(op, err)
}

// Each calls fn with every run the filter selects, in time order, then
// in the order they were stored.
func (s *pgStore) Each(f Filter, fn func(Run) error) error {
	if f.Commit != "" {
		if err := checkCommits([]string{f.Commit}); err != nil {
			return err
		}
	}
	if f.Since.After(maxTime) || (!f.Until.IsZero() && !f.Until.After(minTime)) {
		return nil
	}
	where := []string{"repository = $1"}
	args := []any{s.repo}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Benchmark != "" {
		add("benchmark = $%d", f.Benchmark)
	}
	if f.Commit != "" {
		add("commit = $%d", f.Commit)
	}
	if !f.Since.IsZero() && f.Since.After(minTime) {
		add("time_ns >= $%d", f.Since.UnixNano())
	}
	if !f.Until.IsZero() && !f.Until.After(maxTime) {
		add("time_ns < $%d", f.Until.UnixNano())
	}
	order := " ORDER BY time_ns, seq"
	if f.Commit != "" {
		order = ` ORDER BY time_ns, id COLLATE "C"`
	}
	return s.query("read runs", "WHERE "+strings.Join(where, " AND ")+order, args,
		func(_ uint64, r Run) error { return fn(r) })
}

// LastSeq returns the greatest sequence number of the repository's runs
// such that no run with a smaller one is still to commit: it waits for
// the writing transactions under way (they hold the write lock shared),
// so that sync, which reads the runs after the last number it saw, never
// skips a run whose transaction committed late. Advisory locks need no
// privilege.
func (s *pgStore) LastSeq() (uint64, error) {
	var seq int64
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || $1))`, pgWriteLock); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM perfgate_runs WHERE repository = $1`, s.repo).Scan(&seq)
	})
	return uint64(seq), s.fail("read the last run", err)
}

// EachSeq calls fn with the runs whose sequence numbers are in [from, to].
func (s *pgStore) EachSeq(from, to uint64, fn func(seq uint64, r Run) error) error {
	if from > to || from > 1<<62 {
		return nil
	}
	to = min(to, 1<<62)
	return s.query("read runs", `WHERE repository = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`, []any{s.repo, int64(from), int64(to)}, fn)
}

// Mark returns the value SetMark stored under key, or nil.
func (s *pgStore) Mark(key string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(context.Background(), `SELECT value FROM perfgate_marks WHERE repository = $1 AND key = $2`, lookup, s.repo, key).Scan(&v)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return v, s.fail("read a sync mark", err)
}

// SetMark stores value under key (nil deletes it).
func (s *pgStore) SetMark(key string, value []byte) error {
	return s.write("store a sync mark", func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if value == nil {
			_, err = tx.Exec(ctx, `DELETE FROM perfgate_marks WHERE repository = $1 AND key = $2`, s.repo, key)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO perfgate_marks (repository, key, value) VALUES ($1, $2, $3) ON CONFLICT (repository, key) DO UPDATE SET value = EXCLUDED.value`, s.repo, key, value)
		}
		return err
	})
}

// Known reports, for each key, whether its run is stored.
func (s *pgStore) Known(keys []RunKey) ([]bool, error) {
	out := make([]bool, len(keys))
	var commits, ids []string
	for _, k := range keys {
		if isSHA(k.Commit) && isRunID(k.ID) {
			commits, ids = append(commits, k.Commit), append(ids, k.ID)
		}
	}
	if len(commits) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(context.Background(), `SELECT r.commit, r.id FROM perfgate_runs r JOIN unnest($2::text[], $3::text[]) AS k(commit, id) ON r.commit = k.commit AND r.id = k.id WHERE r.repository = $1`, s.repo, commits, ids)
	if err != nil {
		return nil, s.fail("look runs up", err)
	}
	found := map[RunKey]bool{}
	var k RunKey
	if _, err := pgx.ForEachRow(rows, []any{&k.Commit, &k.ID}, func() error { found[k] = true; return nil }); err != nil {
		return nil, s.fail("look runs up", err)
	}
	for i, key := range keys {
		out[i] = found[key]
	}
	return out, nil
}

// FindRuns returns the runs whose id is id or starts with it.
func (s *pgStore) FindRuns(id string) ([]RunKey, error) {
	id = strings.ToLower(id)
	if len(id) < 4 || len(id) > 32 || !isLowerHex(id) {
		return nil, badf("%q is not a run id (32 hex digits, or a prefix of at least 4)", id)
	}
	rows, err := s.pool.Query(context.Background(), `SELECT commit, id FROM perfgate_runs WHERE repository = $1 AND id LIKE $2 ORDER BY commit COLLATE "C", id COLLATE "C" LIMIT 11`, s.repo, id+"%")
	if err != nil {
		return nil, s.fail("find runs", err)
	}
	var out []RunKey
	var k RunKey
	_, err = pgx.ForEachRow(rows, []any{&k.Commit, &k.ID}, func() error { out = append(out, k); return nil })
	return out, s.fail("find runs", err)
}

// PutRecords stores records in one transaction, all or none.
func (s *pgStore) PutRecords(recs []Record) (added int, err error) {
	if s.readOnly {
		return 0, s.readOnlyErr()
	}
	if err := prepareRecords(recs, s.now()); err != nil {
		return 0, err
	}
	err = s.write("store records", func(ctx context.Context, tx pgx.Tx) error {
		var err error
		added, err = s.putRecordsTx(ctx, tx, recs)
		return err
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

func (s *pgStore) putRecordsTx(ctx context.Context, tx pgx.Tx, recs []Record) (int, error) {
	added := 0
	for i := range recs {
		r := &recs[i]
		tag, err := tx.Exec(ctx, `INSERT INTO perfgate_records (repository, id, kind, commit, benchmark, metric, run, reason, decided_by, recorded_at, line)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (repository, id) DO NOTHING`,
			s.repo, r.ID, r.Kind, r.Commit, r.Benchmark, r.Metric, r.Run, r.Reason, r.By, r.Time, string(AppendRecordJSON(nil, r)))
		if err != nil {
			return 0, err
		}
		added += int(tag.RowsAffected())
	}
	return added, nil
}

// Records returns every record of the repository, oldest first.
func (s *pgStore) Records() ([]Record, error) {
	rows, err := s.pool.Query(context.Background(), `SELECT id, line FROM perfgate_records WHERE repository = $1`, lookup, s.repo)
	if err != nil {
		return nil, s.fail("read records", err)
	}
	var out []Record
	var id, line string
	_, err = pgx.ForEachRow(rows, []any{&id, &line}, func() error {
		r, err := ParseRecord([]byte(line))
		if err != nil {
			s.bad.note(fmt.Sprintf("history database %s, repository %q: row %q of perfgate_records is no valid record, left out: %v", s.display, s.repo, id, scrub(err.Error(), s.secret)))
			return nil
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, s.fail("read records", err)
	}
	sortRecords(out)
	return out, nil
}

// Import reads JSONL runs and stores them in one transaction: all of the
// input, or nothing when a line is bad or the database fails. Into a
// repository with no runs yet the runs are copied straight into
// perfgate_runs (no conflict is possible, so the temporary table and the
// INSERT ... SELECT of importRest are not needed) until a line repeats a
// commit and id already copied (or the set of them is full); the rest
// goes through importRest, which then sees the runs already copied.
// COPY is refused into a table whose row-level security applies to the
// role (a granted writer), so that role always takes importRest.
func (s *pgStore) Import(r io.Reader, opts ImportOptions) (added, skipped int, err error) {
	if s.readOnly {
		return 0, 0, fmt.Errorf("import into history %s: %w", s.display, ErrReadOnly)
	}
	name, size := opts.source()
	batches := make(chan parsedBatch, 1)
	stop := make(chan struct{})
	defer close(stop)
	go parseBatches(r, name, size, opts.Unknown, batches, stop)
	src := &importSource{repo: s.repo, batches: batches}
	var recsAdded int
	err = s.write("import", func(ctx context.Context, tx pgx.Tx) error {
		var direct bool
		if err := tx.QueryRow(ctx, `SELECT NOT row_security_active('perfgate_runs') AND NOT EXISTS (SELECT 1 FROM perfgate_runs WHERE repository = $1)`, s.repo).Scan(&direct); err != nil {
			return err
		}
		if direct {
			src.seen = make(map[uint64]struct{})
			n, err := tx.CopyFrom(ctx, pgx.Identifier{"perfgate_runs"}, runColumns, src)
			if err != nil {
				if src.err != nil {
					return src.err
				}
				return err
			}
			added = int(n)
		}
		if !direct || src.rest {
			n, err := s.importRest(ctx, tx, name, src)
			if err != nil {
				return err
			}
			added += n
		}
		skipped = src.n - added
		if len(src.recs) > 0 {
			if err := prepareRecords(src.recs, s.now()); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			var err error
			if recsAdded, err = s.putRecordsTx(ctx, tx, src.recs); err != nil {
				return fmt.Errorf("%s: storing its %d records: %w", name, len(src.recs), err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if opts.Progress != nil {
		opts.Progress(added, skipped)
	}
	if len(src.recs) > 0 && opts.Records != nil {
		opts.Records(recsAdded, len(src.recs))
	}
	return added, skipped, nil
}

// importRest imports the runs src has not sent yet through COPY into a
// temporary table, then one INSERT ... ON CONFLICT DO NOTHING after
// importConflicts; it returns the runs added.
func (s *pgStore) importRest(ctx context.Context, tx pgx.Tx, name string, src *importSource) (int, error) {
	src.seen, src.rest = nil, false
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE perfgate_import (LIKE perfgate_runs INCLUDING DEFAULTS, line bigint NOT NULL) ON COMMIT DROP`); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE perfgate_import DROP COLUMN seq, DROP COLUMN measured_at`); err != nil {
		return 0, err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"perfgate_import"}, append(slices.Clip(runColumns), "line"), src); err != nil {
		if src.err != nil {
			return 0, src.err
		}
		return 0, err
	}
	if err := s.importConflicts(ctx, tx, name); err != nil {
		return 0, err
	}
	cols := strings.Join(runColumns, ", ")
	tag, err := tx.Exec(ctx, `INSERT INTO perfgate_runs (`+cols+`) SELECT `+cols+` FROM perfgate_import ON CONFLICT (repository, commit, id) DO NOTHING`)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// importConflicts fails the import when a line's id is stored with
// different content. Rows equal in every column are re-imports; the few
// that differ are compared as Put compares them (the time does not count
// for a run read from a file).
func (s *pgStore) importConflicts(ctx context.Context, tx pgx.Tx, name string) error {
	var icols, rcols []string
	for _, c := range runColumns[1:] {
		icols, rcols = append(icols, "i."+c), append(rcols, "r."+c)
	}
	rows, err := tx.Query(ctx, `SELECT i.line, 0::bigint, `+strings.Join(icols, ", ")+`, r.seq, `+strings.Join(rcols, ", ")+`
FROM perfgate_import i JOIN perfgate_runs r ON r.repository = i.repository AND r.commit = i.commit AND r.id = i.id
WHERE (`+strings.Join(icols, ", ")+`) IS DISTINCT FROM (`+strings.Join(rcols, ", ")+`)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var line int
		var (
			a, b                   Run
			seqA, seqB, nsA, nsB   int64
			mA, lA, eA, mB, lB, eB []byte
			rA, rB                 *string
		)
		if err := rows.Scan(&line, &seqA, &a.Commit, &a.ID, &a.Benchmark, &nsA, &mA, &lA, &a.Source.Format, &a.Source.File, &a.Source.Line, &a.Command, &a.ExitCode, &a.Dirty, &a.Invalid, &a.Testbed, &eA, &a.Tree, &rA,
			&seqB, &b.Commit, &b.ID, &b.Benchmark, &nsB, &mB, &lB, &b.Source.Format, &b.Source.File, &b.Source.Line, &b.Command, &b.ExitCode, &b.Dirty, &b.Invalid, &b.Testbed, &eB, &b.Tree, &rB); err != nil {
			return err
		}
		setRequests(&a, rA)
		setRequests(&b, rB)
		if err := fillRun(&a, nsA, mA, lA, eA, nil); err != nil {
			return err
		}
		if err := fillRun(&b, nsB, mB, lB, eB, nil); err != nil {
			return err
		}
		if !equalIdentity(&a, &b) {
			return &LineError{File: name, Line: line, Err: idConflict(a.ID, &b)}
		}
	}
	return rows.Err()
}

// fillRun decodes a run's time and JSON columns (names: see scanRun).
func fillRun(r *Run, ns int64, metrics, labels, env []byte, names map[string]string) error {
	r.Time = time.Unix(0, ns).UTC()
	var ok bool
	if r.Metrics, ok = jsonbNumbers(metrics, names); !ok {
		r.Metrics = nil
		if err := json.Unmarshal(metrics, &r.Metrics); err != nil {
			return err
		}
	}
	if r.Labels, ok = jsonbStrings(labels, names); !ok {
		r.Labels = nil
		if err := json.Unmarshal(labels, &r.Labels); err != nil {
			return err
		}
	}
	if env == nil {
		return nil
	}
	if r.Env, ok = jsonbStrings(env, names); !ok {
		r.Env = nil
		return json.Unmarshal(env, &r.Env)
	}
	return nil
}

// jsonbNumbers decodes a flat object of numbers as PostgreSQL prints a
// jsonb ({"a": 1.5, "b": 2}), several times faster than encoding/json:
// watch reads every run of a branch. ok is false for anything else (a
// key with an escape), which the caller decodes the general way. names,
// when not nil, interns the keys (fastParser.name).
func jsonbNumbers(b []byte, names map[string]string) (m map[string]float64, ok bool) {
	return jsonbObject(b, names, (*fastParser).num)
}

// jsonbStrings is jsonbNumbers for an object of strings (labels, env),
// whose values are interned with the keys.
func jsonbStrings(b []byte, names map[string]string) (m map[string]string, ok bool) {
	return jsonbObject(b, names, (*fastParser).name)
}

// jsonbObject decodes a flat jsonb object whose values value reads.
func jsonbObject[V any](b []byte, names map[string]string, value func(*fastParser, *V) bool) (m map[string]V, ok bool) {
	p := fastParser{b: b, names: names}
	if !utf8.Valid(b) || !p.lit("{") {
		return nil, false
	}
	m = make(map[string]V, p.entries())
	if p.lit("}") {
		return m, p.i == len(b)
	}
	for {
		var k string
		var v V
		if !p.name(&k) || !p.lit(": ") || !value(&p, &v) {
			return nil, false
		}
		m[k] = v
		if p.lit("}") {
			return m, p.i == len(b)
		}
		if !p.lit(", ") {
			return nil, false
		}
	}
}

// importSource feeds COPY from parseBatches, numbering the rows by their
// input line (for importRest), and keeps the record lines for after the
// runs. While seen is not nil (the direct COPY of Import) it holds a hash
// of the commit and id of each run sent; a run whose hash is there (a
// repeated run, or a rare collision), or a full set, ends that COPY with
// rest set, and the run is sent again by importRest.
type importSource struct {
	repo    string
	batches <-chan parsedBatch
	cur     parsedBatch
	i       int
	n       int
	recs    []Record
	err     error
	vals    []any
	seen    map[uint64]struct{}
	rest    bool
}

// maxDirect bounds the runs of a direct COPY (the set of their hashes,
// about 40 MiB at most); the runs after them go through importRest.
var maxDirect = 2_000_000

var importSeed = maphash.MakeSeed()

func (s *importSource) Next() bool {
	for s.i >= len(s.cur.runs) {
		b, ok := <-s.batches
		if !ok {
			return false
		}
		if b.err != nil {
			s.err = b.err
			return false
		}
		s.recs = append(s.recs, b.recs...)
		s.cur, s.i = b, 0
	}
	r := &s.cur.runs[s.i]
	if s.seen != nil {
		var h maphash.Hash
		h.SetSeed(importSeed)
		h.WriteString(r.Commit)
		h.WriteByte(0)
		h.WriteString(r.ID)
		k := h.Sum64()
		if _, dup := s.seen[k]; dup || len(s.seen) >= maxDirect {
			s.rest = true
			return false
		}
		s.seen[k] = struct{}{}
		s.vals = runValues(s.repo, r)
	} else {
		s.vals = append(runValues(s.repo, r), int64(s.cur.lines[s.i]))
	}
	s.i++
	s.n++
	return true
}

func (s *importSource) Values() ([]any, error) { return s.vals, nil }
func (s *importSource) Err() error             { return s.err }
