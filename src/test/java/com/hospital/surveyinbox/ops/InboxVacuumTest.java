package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: the redelivery sweeps stay cheap on a large table after many messages passed through it (V13). Rows
 * taken RECEIVED -> PROCESSING -> FAILED -> COMPLETED leave dead entries in the partial indexes the sweeps walk;
 * a vacuum of the table (what autovacuum runs) must remove them even when, as on any large table, they sit on
 * under 2 % of its pages - where PostgreSQL's default skips index cleanup and every later tick keeps reading
 * them. A database of its own: 400,000 finished rows, then 1,000 messages through every unfinished status, each
 * with its own times (as in production, so their index entries are not deduplicated into a few pages).
 */
class InboxVacuumTest {

    static String url;
    static String database;

    @BeforeAll
    static void largeTableWithTraffic() throws SQLException {
        database = "vacuum_" + System.nanoTime();
        url = EmbeddedServices.get().createDatabase(database);
        flyway(url).load().migrate();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                    + " SELECT 'OLD-' || g, 'SEND', 'COMPLETED', 1, now() - INTERVAL '30 days', now() - INTERVAL '30 days'"
                    + " FROM generate_series(1, 400000) g");
            s.execute("VACUUM ANALYZE inbox_message");
            // what workers do to each message (the statuses and the columns the sweeps' indexes hold)
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                    + " SELECT 'NEW-' || g, 'SEND', 'RECEIVED', 0, now() - INTERVAL '20 minutes' + g * INTERVAL '1 ms',"
                    + " now() - INTERVAL '20 minutes' + g * INTERVAL '1 ms' FROM generate_series(1, 1000) g");
            s.execute("UPDATE inbox_message SET status = 'PROCESSING', updated_at = created_at + INTERVAL '1 minute'"
                    + " WHERE srvy_drawup_no LIKE 'NEW-%'");
            s.execute("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = created_at + INTERVAL '2 minutes'"
                    + " WHERE srvy_drawup_no LIKE 'NEW-%'");
            s.execute("UPDATE inbox_message SET status = 'COMPLETED', updated_at = created_at + INTERVAL '3 minutes'"
                    + " WHERE srvy_drawup_no LIKE 'NEW-%'");
        }
    }

    @AfterAll
    static void drop() {
        EmbeddedServices.get().dropDatabase(database);
    }

    static Connection connect() throws SQLException {
        return DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
    }

    static final String DUE_RETRIES = "SELECT id FROM inbox_message WHERE status = 'FAILED'"
            + " AND last_attempt_at < now() - INTERVAL '30 seconds' ORDER BY last_attempt_at LIMIT 500 FOR UPDATE SKIP LOCKED";
    static final String LOST_EVENTS = "SELECT id FROM inbox_message WHERE status = 'RECEIVED'"
            + " AND created_at < now() - INTERVAL '60 seconds' ORDER BY created_at LIMIT 500 FOR UPDATE SKIP LOCKED";

    @Test
    void aVacuumOfTheTableRemovesTheSweepsDeadIndexEntries() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            // the ticks before the vacuum came: each read the dead entries, the first marked them killed
            pagesRead(s, DUE_RETRIES);
            pagesRead(s, LOST_EVENTS);
            long killedButThere = pagesRead(s, DUE_RETRIES);

            // no options but VERBOSE: what autovacuum runs, under the table's own settings
            s.execute("VACUUM (VERBOSE) inbox_message");
            StringBuilder report = new StringBuilder();
            for (java.sql.SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
                report.append(w.getMessage()).append('\n');
            }
            String own = report.toString(); // the table's report, then its TOAST table's ("index scan not needed")
            // PostgreSQL's default here: "index scan bypassed: N pages from table (0.x% of total) have M dead item identifiers"
            assertThat(own).as("VACUUM VERBOSE of inbox_message").contains("finished vacuuming").doesNotContain("index scan bypassed")
                    .contains("index scan needed");

            // the next ticks: nothing dead left to walk
            assertThat(pagesRead(s, DUE_RETRIES)).as("pages the due-retry sweep read (%d before the vacuum)", killedButThere)
                    .isLessThan(5);
            assertThat(pagesRead(s, LOST_EVENTS)).as("pages the lost-event sweep read").isLessThan(5);
        }
    }

    @Test
    void theTableIsVacuumedByAFixedNumberOfDeadRows() throws SQLException {
        String settings = reloptions(url);
        assertThat(settings).as("inbox_message's own settings").isNotNull();
        assertThat(settings.split(",")).contains("autovacuum_vacuum_scale_factor=0",
                "autovacuum_vacuum_threshold=100000", "vacuum_index_cleanup=on");
    }

    /**
     * V13 waits for a VACUUM of the table (an anti-wraparound one is never cancelled for it) longer than Flyway's
     * lock timeout (5 s), retrying, instead of failing the start: a database of its own at V12, the table's
     * SHARE UPDATE EXCLUSIVE lock held by another session for more than 6 s, then released.
     */
    @Test
    void theSettingsWaitForARunningVacuumInsteadOfFailingTheStart() throws Exception {
        String other = "vacuum_lock_" + System.nanoTime();
        String otherUrl = EmbeddedServices.get().createDatabase(other);
        try {
            flyway(otherUrl).target("12").load().migrate();
            try (Connection holder = DriverManager.getConnection(otherUrl, EmbeddedServices.DB_USER, "");
                 Statement h = holder.createStatement()) {
                holder.setAutoCommit(false);
                h.execute("LOCK TABLE inbox_message IN SHARE UPDATE EXCLUSIVE MODE"); // what a running VACUUM holds
                java.util.concurrent.CompletableFuture<Void> migration = java.util.concurrent.CompletableFuture.runAsync(
                        () -> flyway(otherUrl).load().migrate());
                // V13's statement has waited for the lock past Flyway's 5 s lock timeout (asked on a connection of its
                // own: within the holder's transaction pg_stat_activity would stay the snapshot of its first read)
                try (Connection watcher = DriverManager.getConnection(otherUrl, EmbeddedServices.DB_USER, "");
                     Statement w = watcher.createStatement()) {
                    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> {
                        try (ResultSet rs = w.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                + " AND wait_event_type = 'Lock' AND now() - query_start > INTERVAL '6 seconds'")) {
                            rs.next();
                            return rs.getLong(1) > 0 || migration.isDone();
                        }
                    });
                }
                assertThat(migration).as("V13 still waiting, not failed").isNotDone();
                holder.commit(); // the vacuum ends
                migration.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            assertThat(reloptions(otherUrl)).contains("vacuum_index_cleanup=on");
        } finally {
            EmbeddedServices.get().dropDatabase(other);
        }
    }

    /**
     * When the table stays locked past V13's tries it gives up without failing the start, and says in the log what
     * to run by hand, and that statement applies the settings. V13's own text, its 48 tries cut to 2 (about 5 s
     * instead of 2 minutes), run on a database of its own at V12 while another session holds what a VACUUM holds.
     */
    @Test
    void theSettingsAreLeftWithAWarningSayingWhatToRunWhenTheTableStaysLocked() throws Exception {
        String v13;
        try (java.io.InputStream in = getClass().getResourceAsStream("/db/migration/V13__vacuum_by_rows.sql")) {
            v13 = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        String shortened = v13.replace("FOR try IN 1..48 LOOP", "FOR try IN 1..2 LOOP");
        assertThat(shortened).as("V13's loop as this test expects it").isNotEqualTo(v13);
        String other = "vacuum_giveup_" + System.nanoTime();
        String otherUrl = EmbeddedServices.get().createDatabase(other);
        try {
            flyway(otherUrl).target("12").load().migrate();
            String warning;
            try (Connection holder = DriverManager.getConnection(otherUrl, EmbeddedServices.DB_USER, "");
                 Statement h = holder.createStatement();
                 Connection migrating = DriverManager.getConnection(otherUrl, EmbeddedServices.DB_USER, "");
                 Statement m = migrating.createStatement()) {
                holder.setAutoCommit(false);
                h.execute("LOCK TABLE inbox_message IN SHARE UPDATE EXCLUSIVE MODE");
                m.setQueryTimeout(30); // a V13 that lost its own lock_timeout fails here instead of hanging the build
                m.execute(shortened); // no exception: the start goes on
                assertThat((Object) m.getWarnings()).as("a warning in the log").isNotNull();
                assertThat(m.getWarnings().getSQLState()).as("a WARNING (logged by the server), not a NOTICE").isEqualTo("01000");
                warning = m.getWarnings().getMessage();
                assertThat(warning).contains("ALTER TABLE", " once it has finished");
                holder.rollback();
            }
            assertThat(reloptions(otherUrl)).as("settings left as they were").isNull();
            String manual = warning.substring(warning.indexOf("ALTER TABLE"), warning.indexOf(" once it has finished"));
            try (Connection c = DriverManager.getConnection(otherUrl, EmbeddedServices.DB_USER, "");
                 Statement s = c.createStatement()) {
                s.execute(manual);
            }
            assertThat(reloptions(otherUrl).split(",")).containsExactlyInAnyOrder("autovacuum_vacuum_scale_factor=0",
                    "autovacuum_vacuum_threshold=100000", "vacuum_index_cleanup=on");
        } finally {
            EmbeddedServices.get().dropDatabase(other);
        }
    }

    /** inbox_message's own storage settings in the database at {@code url}, comma-separated (null: none). */
    private static String reloptions(String url) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'inbox_message'")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Flyway as the service runs it (FlywayConnection: a 5 s lock timeout). */
    static org.flywaydb.core.api.configuration.FluentConfiguration flyway(String target) {
        return com.hospital.surveyinbox.config.FlywayConnection.configure(Flyway.configure(), target, EmbeddedServices.DB_USER, "",
                java.time.Duration.ofSeconds(5), new java.util.Properties()).locations("classpath:db/migration");
    }

    /** Shared pages (hit or read) the statement's plan touched, from EXPLAIN (ANALYZE, BUFFERS). */
    private static long pagesRead(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)) {
            rs.next();
            JsonNode plan = new ObjectMapper().readTree(rs.getString(1)).get(0).get("Plan");
            return plan.get("Shared Hit Blocks").asLong() + plan.get("Shared Read Blocks").asLong();
        }
    }
}
