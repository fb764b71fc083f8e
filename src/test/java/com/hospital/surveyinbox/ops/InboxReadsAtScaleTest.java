package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.EmbeddedServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 22: the counts per status ({@code inbox_status_counts()}, V8/V9) that the gauges and
 * {@code GET /ops/inbox/stats} read are exact at any moment whatever changes the rows - reception, claim,
 * completion, failure, requeue, retention's batch delete, a rollback, workers and the redelivery job's folds at the
 * same time - readable in a read-only transaction, and read
 * without touching the finished rows; an operator's list of one subject's rows reads that subject's rows only; the
 * console's history chart reads its window only.
 * A database of its own (no background work of a running service), brought
 * to V7 and filled first, so V9's starting totals are checked too.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InboxReadsAtScaleTest {

    static String url;
    static String database;

    @BeforeAll
    static void databaseWithHistory() throws SQLException {
        database = "reads_at_scale_" + System.nanoTime();
        url = EmbeddedServices.get().createDatabase(database);
        flyway().target("7").load().migrate();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute(insert("COMPLETED", 3000) + ";" + insert("DEAD", 40) + ";" + insert("RECEIVED", 7) + ";" + insert("FAILED", 3));
        }
        flyway().load().migrate();
    }

    /** Flyway as the service runs it (its advisory lock held by a session, so CREATE INDEX CONCURRENTLY can finish). */
    static org.flywaydb.core.api.configuration.FluentConfiguration flyway() {
        return com.hospital.surveyinbox.config.FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "",
                java.time.Duration.ofSeconds(5), new java.util.Properties()).locations("classpath:db/migration");
    }

    @AfterAll
    static void drop() {
        EmbeddedServices.get().dropDatabase(database);
    }

    static Connection connect() throws SQLException {
        return DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
    }

    static String insert(String status, int rows) {
        return "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts) SELECT 'CNT-' || g, 'SEND', '"
                + status + "', 1 FROM generate_series(1, " + rows + ") g";
    }

    static void run(String... statements) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }

    static final String FOLD;

    static {
        try (var in = InboxReadsAtScaleTest.class.getResourceAsStream("/sql/fold-status-counts.sql")) {
            FOLD = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** What the redelivery job's count fold runs, 5,000 deltas a statement, until every delta is folded. */
    static void fold() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            foldAll(s);
        }
    }

    /** The count fold's statement until one folds less than a full batch; how many deltas were folded. */
    static long foldAll(Statement s) throws SQLException {
        long total = 0;
        boolean more;
        do {
            try (ResultSet rs = s.executeQuery(FOLD)) {
                rs.next();
                total += rs.getLong("folded");
                more = rs.getBoolean("more");
            }
        } while (more);
        return total;
    }

    /** What the service reads; a status without rows reads 0. */
    static Map<String, Long> counts() throws SQLException {
        return read("SELECT status, total FROM inbox_status_counts()");
    }

    static Map<String, Long> actual() throws SQLException {
        return read("SELECT status, count(*) FROM inbox_message GROUP BY status");
    }

    static Map<String, Long> read(String sql) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            return read(s, sql);
        }
    }

    static Map<String, Long> read(Statement s, String sql) throws SQLException {
        Map<String, Long> counts = new TreeMap<>();
        for (String status : List.of("RECEIVED", "PROCESSING", "COMPLETED", "FAILED", "DEAD")) {
            counts.put(status, 0L);
        }
        try (ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getLong(2));
            }
        }
        return counts;
    }

    @Test
    @Order(1)
    void startsFromTheRowsTheTableHeldAndFollowsEveryChange() throws SQLException {
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 3000L).containsEntry("DEAD", 40L)
                .containsEntry("RECEIVED", 7L);

        run(insert("RECEIVED", 20));
        assertThat(counts()).isEqualTo(actual());
        // claim, complete, fail, die, requeue: the transitions the routes make
        run("UPDATE inbox_message SET status = 'PROCESSING' WHERE id IN (SELECT id FROM inbox_message WHERE status = 'RECEIVED' LIMIT 15)");
        assertThat(counts()).isEqualTo(actual());
        run("UPDATE inbox_message SET status = 'COMPLETED' WHERE id IN (SELECT id FROM inbox_message WHERE status = 'PROCESSING' LIMIT 10)",
                "UPDATE inbox_message SET status = 'FAILED' WHERE status = 'PROCESSING'");
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 3010L);
        fold();
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 3010L);
        run("UPDATE inbox_message SET status = 'DEAD' WHERE id IN (SELECT id FROM inbox_message WHERE status = 'FAILED' LIMIT 4)");
        assertThat(counts()).isEqualTo(actual()).containsEntry("DEAD", 44L);
        run("UPDATE inbox_message SET status = 'RECEIVED', attempts = 0 WHERE id IN (SELECT id FROM inbox_message WHERE status = 'DEAD' LIMIT 5)");
        assertThat(counts()).isEqualTo(actual()).containsEntry("DEAD", 39L);
        // a finished row changed in another column, a same-status update, a row inserted finished
        run("UPDATE inbox_message SET payload = NULL, redacted_at = now() WHERE status = 'COMPLETED'",
                "UPDATE inbox_message SET status = 'COMPLETED' WHERE id IN (SELECT id FROM inbox_message WHERE status = 'COMPLETED' LIMIT 3)",
                insert("COMPLETED", 2));
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 3012L);
        // retention's batches
        run("DELETE FROM inbox_message WHERE id IN (SELECT id FROM inbox_message WHERE status = 'COMPLETED' ORDER BY id LIMIT 500)",
                "DELETE FROM inbox_message WHERE id IN (SELECT id FROM inbox_message WHERE status IN ('DEAD', 'RECEIVED') ORDER BY id LIMIT 12)");
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 2512L);
        fold();
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 2512L);
        // a transaction that completes and deletes rows, then rolls back, counts nothing
        try (Connection c = connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("UPDATE inbox_message SET status = 'COMPLETED' WHERE status = 'RECEIVED'");
            s.execute("DELETE FROM inbox_message WHERE status = 'DEAD'");
            c.rollback();
        }
        assertThat(counts()).isEqualTo(actual());
        // read-only: a read-only transaction (a replica, a dashboard) reads the counts too
        try (Connection c = connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            c.setReadOnly(true);
            assertThat(read(s, "SELECT status, total FROM inbox_status_counts()")).isEqualTo(actual());
            c.rollback();
        }
    }

    @Test
    @Order(2)
    void isExactAtEveryMomentWhileWorkersCompleteAndDeleteAndTwoPodsFold() throws Exception {
        run(insert("RECEIVED", 4000));
        // a thread for each of the six workers, two folders and the reader: with eight, the reader waited for a worker
        // to end, and all could end before it began (a flake: nothing compared while the rows changed)
        ExecutorService pool = Executors.newFixedThreadPool(9);
        AtomicBoolean working = new AtomicBoolean(true);
        // the workers start once the reader has compared one snapshot
        java.util.concurrent.CountDownLatch readerComparing = new java.util.concurrent.CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < 6; w++) {
            int worker = w;
            workers.add(pool.submit(() -> {
                assertThat(readerComparing.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                try (Connection c = connect(); Statement s = c.createStatement()) {
                    for (int i = 0; i < 150; i++) {
                        // one row per transaction, as a worker completes them; every tenth dies; some are deleted
                        String to = (i % 10 == 0) ? "DEAD" : "COMPLETED";
                        s.execute("UPDATE inbox_message SET status = '" + to + "' WHERE id = (SELECT id FROM inbox_message"
                                + " WHERE status = 'RECEIVED' AND id % 6 = " + worker + " ORDER BY id LIMIT 1)");
                        if (i % 25 == 0) {
                            s.execute("DELETE FROM inbox_message WHERE id IN (SELECT id FROM inbox_message WHERE status = 'COMPLETED'"
                                    + " AND id % 6 = " + worker + " ORDER BY id LIMIT 20)");
                        }
                    }
                }
                return null;
            }));
        }
        // the redelivery job on two pods folding, and a reader comparing the counts with the table in one snapshot
        List<Future<?>> others = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger compared = new java.util.concurrent.atomic.AtomicInteger();
        for (int f = 0; f < 2; f++) {
            others.add(pool.submit(() -> {
                while (working.get()) {
                    fold();
                }
                return null;
            }));
        }
        others.add(pool.submit(() -> {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                while (working.get()) {
                    Map<String, Long> counts = read(s, "SELECT status, total FROM inbox_status_counts()");
                    assertThat(counts).isEqualTo(read(s, "SELECT status, count(*) FROM inbox_message GROUP BY status"));
                    c.rollback();
                    compared.incrementAndGet();
                    readerComparing.countDown();
                }
            }
            return null;
        }));
        for (Future<?> w : workers) {
            w.get();
        }
        // one comparison at least begun once the workers had started (the first one was before them)
        Future<?> reader = others.get(others.size() - 1);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60))
                .until(() -> compared.get() >= 2 || reader.isDone()); // done: its failure is told below
        working.set(false);
        for (Future<?> f : others) {
            f.get();
        }
        pool.shutdown();
        assertThat(compared.get()).as("snapshots compared while the rows changed").isGreaterThanOrEqualTo(2);
        assertThat(counts()).isEqualTo(actual());
    }

    @Test
    @Order(3)
    void readsTheUnfinishedRowsOnlyNotTheFinishedHistory() throws SQLException {
        run(insert("COMPLETED", 50_000), "VACUUM ANALYZE inbox_message");
        try (Connection c = connect(); Statement s = c.createStatement()) {
            foldAll(s); // the insert's deltas folded, as the next ticks would (this session: its reads counted now)
            long before = rowsRead(s);
            Map<String, Long> counts = new TreeMap<>();
            try (ResultSet rs = s.executeQuery("SELECT status, total FROM inbox_status_counts()")) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getLong(2));
                }
            }
            long read = rowsRead(s) - before;
            assertThat(counts.get("COMPLETED")).isGreaterThan(50_000L);
            long unfinished = counts.getOrDefault("RECEIVED", 0L) + counts.getOrDefault("PROCESSING", 0L)
                    + counts.getOrDefault("FAILED", 0L);
            assertThat(read).as("table and index entries read by one count").isLessThanOrEqualTo(unfinished + 100);
            // the control: the count the service made before V8, measured the same way, reads every finished row
            before = rowsRead(s);
            s.executeQuery("SELECT status, count(*) FROM inbox_message GROUP BY status").close();
            assertThat(rowsRead(s) - before).isGreaterThanOrEqualTo(50_000L);
        }
    }

    @Test
    @Order(4)
    void listsASubjectsRowsThroughItsIndexEvenWithAGenericPlan() throws SQLException {
        run("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status) VALUES ('FEW-1', 'SUBMIT', 'COMPLETED'),"
                + " ('FEW-1', 'SEND', 'DEAD'), ('FEW-1', 'SEND', 'RECEIVED')", "ANALYZE inbox_message");
        // the shape Hibernate sends for InboxRow.bySubject; without an index of every row's subject the whole table
        // is read backwards, 50,000+ rows
        listsReadingAtMost("SELECT id, status FROM inbox_message WHERE srvy_drawup_no = ?", "FEW-1", 3, 10, "rows read to list one subject");
    }

    @Test
    @Order(4)
    void listsTheOwedRepliesThroughTheirPartialIndexEvenWithAGenericPlan() throws SQLException {
        run("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, reply_status, reply_updated_at) VALUES"
                + " ('OWE-1', 'SEND', 'COMPLETED', 'FAILED', now()), ('OWE-2', 'SEND', 'DEAD', 'FAILED', now()),"
                + " ('OWE-3', 'SEND', 'DEAD', 'PENDING', now())", "ANALYZE inbox_message");
        // the shape Hibernate sends for InboxRow.byReplyStatus; the finished rows whose replies were delivered or
        // never owed (50,000+) are not read
        listsReadingAtMost("SELECT id, status FROM inbox_message WHERE reply_status IN ('PENDING', 'SENDING', 'FAILED')"
                + " AND reply_status = ?", "FAILED", 2, 20, "rows read to list the failing replies");
    }

    /**
     * {@code select} (one parameter, {@code value}) with the operator's optional status filter, newest first, run
     * as the worst case a pooled, server-prepared statement can get (a generic plan), with and without a status:
     * each run finds its rows ({@code all} without a status, the one DEAD or COMPLETED row with) reading at most
     * {@code maxRead} table and index entries.
     */
    private static void listsReadingAtMost(String select, String value, int all, int maxRead, String what) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("SET plan_cache_mode = force_generic_plan");
            // with the page's cursor as the first page has it (every id below the largest there can be)
            try (var ps = c.prepareStatement(select + " AND (CAST(? AS text) IS NULL OR status = ?) AND id < ? ORDER BY id DESC FETCH FIRST ? ROWS ONLY")) {
                for (String status : new String[] {null, "DEAD", null, "DEAD", null, "COMPLETED"}) {
                    long before = rowsRead(s);
                    ps.setString(1, value);
                    ps.setString(2, status);
                    ps.setString(3, status);
                    ps.setLong(4, Long.MAX_VALUE);
                    ps.setInt(5, 50);
                    int found = 0;
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            found++;
                        }
                    }
                    assertThat(found).as(what + ", status " + status).isEqualTo(status == null ? all : 1);
                    assertThat(rowsRead(s) - before).as(what).isLessThanOrEqualTo(maxRead);
                }
            }
        }
    }

    @Test
    @Order(5)
    void theHistoryChartReadsItsWindowOnlyNotTheDaysBefore() throws Exception {
        // 400,000 rows and attempts that finished ten days ago: history outside every window the chart shows
        run("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                        + " SELECT 'OLD-' || g, 'SEND', 'COMPLETED', 1, now() - INTERVAL '10 days', now() - INTERVAL '10 days'"
                        + " FROM generate_series(1, 400000) g",
                "INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome)"
                        + " SELECT id, 1, created_at, created_at, 'COMPLETED' FROM inbox_message WHERE srvy_drawup_no LIKE 'OLD-%'",
                "VACUUM (ANALYZE, INDEX_CLEANUP ON) inbox_message", "VACUUM (ANALYZE, INDEX_CLEANUP ON) inbox_attempt");
        String history;
        try (var in = getClass().getResourceAsStream("/sql/history-per-minute.sql")) {
            history = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        try (Connection c = connect(); Statement s = c.createStatement()) {
            Map<String, Long> recentIn = Map.of(
                    "inbox_message", read(s, "SELECT 'n', count(*) FROM inbox_message WHERE created_at >= now() - INTERVAL '1 day'").get("n"),
                    "inbox_attempt", read(s, "SELECT 'n', count(*) FROM inbox_attempt WHERE finished_at >= now() - INTERVAL '1 day'").get("n"));
            long recent = recentIn.values().stream().mapToLong(Long::longValue).sum();
            // the index entries of row versions the earlier tests superseded (a non-HOT update or a delete leaves one
            // behind in every index) are read too while a vacuum has left them: PostgreSQL skips index cleanup when
            // under 2 % of the pages hold dead rows (likely after 400,000 new ones; INDEX_CLEANUP ON above asks for it)
            // and leaves a page it could not lock. CI once read 319 more than the window. At most one entry per
            // superseded version, and these stay far below the 800,000 rows of the old history the chart must not read.
            long superseded = read(s, "SELECT 'n', sum(n_tup_upd - n_tup_hot_upd + n_tup_del) FROM pg_stat_user_tables"
                    + " WHERE relname IN ('inbox_message', 'inbox_attempt')").get("n");
            assertThat(superseded).as("superseded row versions (else the bound below says nothing)").isLessThan(50_000);
            // the planner knows how much of each table the window holds: the window's start was hidden in a subquery,
            // so it assumed a third of both tables (and on 10 million rows scanned them: 640 ms, BIGTABLE.md)
            // nothing folded (V14's starting watermark, a day back): the chart counts the rows of its whole window
            java.time.OffsetDateTime foldedUntil;
            try (ResultSet w = s.executeQuery("SELECT folded_until FROM inbox_history_folded")) {
                w.next();
                foldedUntil = w.getObject(1, java.time.OffsetDateTime.class);
            }
            assertThat(foldedUntil).isBefore(java.time.OffsetDateTime.now().minusMinutes(1439));
            try (var explain = c.prepareStatement("EXPLAIN (FORMAT JSON) " + history)) {
                bindChart(explain, 1440, foldedUntil);
                try (ResultSet rs = explain.executeQuery()) {
                    rs.next();
                    List<com.fasterxml.jackson.databind.JsonNode> scans = new com.fasterxml.jackson.databind.ObjectMapper()
                            .readTree(rs.getString(1)).findParents("Relation Name").stream()
                            .filter(scan -> !scan.get("Relation Name").asText().equals("inbox_history_minute")).toList();
                    assertThat(scans).hasSize(2).allSatisfy(scan -> assertThat(scan.get("Plan Rows").asLong())
                            .as("estimated rows of %s (in the window: %s), plan %s", scan.get("Relation Name").asText(), recentIn, scans)
                            .isLessThanOrEqualTo(2 * recentIn.get(scan.get("Relation Name").asText()) + 100));
                }
            }
            try (var ps = c.prepareStatement(history)) {
                // past the driver's prepare threshold (5) and the server's five custom plans before it weighs a generic one
                for (int minutes : new int[] {60, 1440, 60, 1440, 60, 1440, 60, 1440, 60, 1440, 60, 1440, 60, 1440}) {
                    long before = rowsRead(s, "inbox_message") + rowsRead(s, "inbox_attempt");
                    bindChart(ps, minutes, foldedUntil);
                    int buckets = 0;
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            buckets++;
                        }
                    }
                    assertThat(buckets).isEqualTo(minutes);
                    long read = rowsRead(s, "inbox_message") + rowsRead(s, "inbox_attempt") - before;
                    // with the window's start hidden in a subquery, both tables were scanned: 800,000+ rows
                    assertThat(read).as("rows read for a %d-minute chart (window %d, superseded versions %d)", minutes, recent, superseded)
                            .isLessThanOrEqualTo(recent + superseded + 100);
                }
            }
        }
    }

    /**
     * The backlog gauge (adapter_inbox_oldest_pending_age_seconds: every pod, every 5 s) reads the unfinished rows,
     * never the finished history, with a backlog and after it drained while the statistics still show it: PostgreSQL
     * planned {@code min(created_at) WHERE status IN (unfinished)} as a walk of the full created_at index (V5) from its
     * oldest entry, testing each row's status; the unfinished rows are the newest, so it read the whole history first
     * (here 100,000 rows older than any unfinished one; on a table of years, millions), on every pod, every 5 s.
     */
    @Test
    @Order(7)
    void theOldestPendingAgeReadsTheUnfinishedRowsNotTheHistory() throws Exception {
        String gauge = com.hospital.surveyinbox.ops.InboxRowRepository.class.getMethod("oldestPendingAgeSeconds")
                .getAnnotation(org.springframework.data.jpa.repository.Query.class).value();
        // history older than any unfinished row, then a backlog of 20,000 recent rows, analysed while it lasts
        run("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                        + " SELECT 'AGED-' || g, 'SEND', 'COMPLETED', 1, now() - INTERVAL '30 days', now() - INTERVAL '30 days'"
                        + " FROM generate_series(1, 100000) g",
                "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, created_at)"
                        + " SELECT 'BACKLOG-' || g, 'SEND', CASE WHEN g % 10 = 0 THEN 'FAILED' ELSE 'RECEIVED' END,"
                        + " now() - INTERVAL '2 days' + g * INTERVAL '1 second' FROM generate_series(1, 20000) g",
                "VACUUM ANALYZE inbox_message");
        try (Connection c = connect(); Statement s = c.createStatement()) {
            long before = rowsRead(s);
            long age = read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age");
            long read = rowsRead(s) - before;
            // what it must say: the oldest backlog row's age, read plainly (after the measured read)
            long oldest = read(s, "SELECT 'age', EXTRACT(EPOCH FROM now() - min(created_at))::bigint FROM inbox_message"
                    + " WHERE status IN ('RECEIVED', 'PROCESSING', 'FAILED')").get("age");
            assertThat(age).isBetween(oldest - 5, oldest).isGreaterThan(86_400L);
            assertThat(read).as("rows read by the gauge with a backlog").isLessThanOrEqualTo(2_000 + 100);
        }
        // drained before autovacuum analyses the table again: the statistics still show the backlog
        run("UPDATE inbox_message SET status = 'COMPLETED' WHERE srvy_drawup_no LIKE 'BACKLOG-%'");
        try (Connection c = connect(); Statement s = c.createStatement()) {
            long before = rowsRead(s);
            // none left (the table was emptied before this test: @Order(6))
            assertThat(read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age")).isZero();
            // at most the drained rows' entries in the unfinished partial indexes (not vacuumed yet), never the history
            assertThat(rowsRead(s) - before).as("rows read by the gauge, drained").isLessThanOrEqualTo(2 * 20_000 + 100);
        }
    }

    /**
     * An age is never negative: the database clock stepped back (an NTP correction) after rows were stored or the job
     * last ran. {@code GET /ops/inbox/stats} answered the oldest row's age negative while its gauge read 0, and the
     * job's last run in the future read -1, "never ran", on the gauge the alert on a silent job reads.
     */
    @Test
    @Order(8)
    void anAgeAfterTheClockSteppedBackIsZeroNotNegative() throws Exception {
        String gauge = com.hospital.surveyinbox.ops.InboxRowRepository.class.getMethod("oldestPendingAgeSeconds")
                .getAnnotation(org.springframework.data.jpa.repository.Query.class).value();
        String lastRun = com.hospital.surveyinbox.ops.InboxRowRepository.class.getMethod("lastRedeliveryRunAgeSeconds")
                .getAnnotation(org.springframework.data.jpa.repository.Query.class).value();
        run("TRUNCATE inbox_message CASCADE", "TRUNCATE redelivery_run");
        try (Connection c = connect(); Statement s = c.createStatement()) {
            assertThat(read(s, "SELECT 'age', (" + lastRun + ")::bigint").get("age")).as("never ran").isEqualTo(-1L);
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, created_at)"
                    + " VALUES ('AHEAD-1', 'SEND', 'RECEIVED', now() + INTERVAL '90 seconds')");
            s.execute("INSERT INTO redelivery_run (scheduled_fire_time, fired_at, instance, scheduler, lost_events, retries,"
                    + " stuck_reset, replies) VALUES (now() + INTERVAL '1 hour', now() + INTERVAL '1 hour', 'pod-a', 'adapter', 0, 0, 0, 0)");
            assertThat(read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age")).isZero();
            assertThat(read(s, "SELECT 'age', (" + lastRun + ")::bigint").get("age")).as("ran just now").isZero();
        }
    }

    /**
     * A row requeued from DEAD owes work from its requeue: a month-old DEAD row requeued after a fix (one by one or in
     * bulk) read a month old on the backlog gauge and in {@code GET /ops/inbox/stats}, and paged as a backlog not
     * draining (critical, after 10 minutes) while it went through its retries again, FAILED between them. A requeued
     * FAILED row has owed its work since it arrived: its age is kept. Through {@code sql/requeue-row.sql} as the
     * operator's call runs it.
     */
    @Test
    @Order(9)
    void aRowRequeuedFromDeadIsAsOldAsItsRequeue() throws Exception {
        String gauge = com.hospital.surveyinbox.ops.InboxRowRepository.class.getMethod("oldestPendingAgeSeconds")
                .getAnnotation(org.springframework.data.jpa.repository.Query.class).value();
        run("TRUNCATE inbox_message CASCADE",
                "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                        + " SELECT 'DONE-' || g, 'SEND', 'COMPLETED', 1, now() - INTERVAL '40 days', now() - INTERVAL '40 days'"
                        + " FROM generate_series(1, 50000) g",
                "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                        + " SELECT 'MONTH-' || g, 'SEND', 'DEAD', 5, now() - INTERVAL '30 days', now() - INTERVAL '29 days'"
                        + " FROM generate_series(1, 50) g",
                "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at)"
                        + " VALUES ('HOURS-1', 'SEND', 'FAILED', 2, now() - INTERVAL '2 hours')",
                "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, created_at)"
                        + " VALUES ('FRESH-1', 'SEND', 'RECEIVED', now() - INTERVAL '10 minutes')",
                "ANALYZE inbox_message");
        try (Connection c = connect(); Statement s = c.createStatement()) {
            var requeue = new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(
                    new org.springframework.jdbc.datasource.SingleConnectionDataSource(c, true));
            String sql = com.hospital.surveyinbox.inbox.SqlFiles.read("requeue-row").replace(":#", ":");
            List<Long> dead = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT id FROM inbox_message WHERE status = 'DEAD' ORDER BY id")) {
                while (rs.next()) {
                    dead.add(rs.getLong(1));
                }
            }
            for (long id : dead) {
                var params = new java.util.HashMap<String, Object>();
                params.put("id", id);
                params.put("expectedStatus", "DEAD");
                params.put("actor", "ops");
                assertThat(requeue.queryForMap(sql, params)).containsEntry("requeued", true);
            }
            // the oldest owed work is the FAILED row's two hours, not the requeued rows' month
            long age = read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age");
            assertThat(age).isBetween(7_200L - 5, 7_200L + 60);
            // requeued rows that failed again (a fix that did not fix it): still as old as their requeue
            s.execute("UPDATE inbox_message SET status = 'FAILED', attempts = 1 WHERE srvy_drawup_no LIKE 'MONTH-%'");
            assertThat(read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age")).isBetween(7_200L - 5, 7_200L + 60);
            // the FAILED row requeued keeps the age it had: its work has been owed since it arrived
            s.execute("UPDATE inbox_message SET status = 'RECEIVED' WHERE srvy_drawup_no LIKE 'MONTH-%'");
            long failed = read(s, "SELECT 'id', id FROM inbox_message WHERE srvy_drawup_no = 'HOURS-1'").get("id");
            var params = new java.util.HashMap<String, Object>();
            params.put("id", failed);
            params.put("expectedStatus", null);
            params.put("actor", "ops");
            assertThat(requeue.queryForMap(sql, params)).containsEntry("requeued", true).containsEntry("fromStatus", "FAILED");
            s.execute("VACUUM ANALYZE inbox_message");
            long before = rowsRead(s);
            assertThat(read(s, "SELECT 'age', (" + gauge + ")::bigint").get("age")).isBetween(7_200L - 5, 7_200L + 60);
            // never the 50,000 finished rows: the arrivals' walk skips the 50 requeued rows (their arrival is older) to
            // the fresh one; the oldest requeued row is the first entry of its own index (V24), not a second walk
            assertThat(rowsRead(s) - before).as("rows read by the gauge").isLessThanOrEqualTo(51 + 10);
        }
    }

    @Test
    @Order(6)
    void aTruncatedTableCountsZero() throws SQLException {
        run("TRUNCATE inbox_message CASCADE");
        assertThat(counts()).isEqualTo(actual()).allSatisfy((status, n) -> assertThat(n).isZero());
        run(insert("COMPLETED", 3));
        assertThat(counts()).isEqualTo(actual()).containsEntry("COMPLETED", 3L);
    }

    static void bindChart(java.sql.PreparedStatement ps, int minutes, java.time.OffsetDateTime foldedUntil) throws SQLException {
        Object[] parameters = InboxHistory.chartParameters(minutes, foldedUntil);
        for (int i = 0; i < parameters.length; i++) {
            ps.setObject(i + 1, parameters[i]);
        }
    }

    /**
     * Rows read from inbox_message so far: its sequential scans' tuples and every entry its indexes returned,
     * this session's own reads included (flushed to the shared statistics when it goes idle after the call).
     */
    private static long rowsRead(Statement s) throws SQLException {
        return rowsRead(s, "inbox_message");
    }

    private static long rowsRead(Statement s, String table) throws SQLException {
        s.execute("SELECT pg_stat_force_next_flush()");
        try (ResultSet rs = s.executeQuery("SELECT coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(idx_tup_read)"
                + " FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0)"
                + " FROM pg_stat_user_tables t WHERE t.relname = '" + table + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
