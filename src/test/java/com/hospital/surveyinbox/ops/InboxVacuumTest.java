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
 * them. A database of its own: 400,000 finished rows, then 2,000 messages through every unfinished status.
 */
class InboxVacuumTest {

    static String url;
    static String database;

    @BeforeAll
    static void largeTableWithTraffic() throws SQLException {
        EmbeddedServices services = EmbeddedServices.get();
        database = "vacuum_" + System.nanoTime();
        try (Connection admin = DriverManager.getConnection(services.jdbcUrl(), EmbeddedServices.DB_USER, "");
             Statement s = admin.createStatement()) {
            s.execute("CREATE DATABASE " + database);
        }
        url = services.jdbcUrl().substring(0, services.jdbcUrl().lastIndexOf('/') + 1) + database;
        // Flyway as the service runs it
        com.hospital.surveyinbox.config.FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "",
                java.time.Duration.ofSeconds(5), new java.util.Properties()).locations("classpath:db/migration").load().migrate();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                    + " SELECT 'OLD-' || g, 'SEND', 'COMPLETED', 1, now() - INTERVAL '30 days', now() - INTERVAL '30 days'"
                    + " FROM generate_series(1, 400000) g");
            s.execute("VACUUM ANALYZE inbox_message");
            // what workers do to each message (the statuses and the columns the sweeps' indexes hold)
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                    + " SELECT 'NEW-' || g, 'SEND', 'RECEIVED', 0, now() - INTERVAL '10 minutes', now() - INTERVAL '10 minutes'"
                    + " FROM generate_series(1, 2000) g");
            s.execute("UPDATE inbox_message SET status = 'PROCESSING', updated_at = now() WHERE srvy_drawup_no LIKE 'NEW-%'");
            s.execute("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = now() - INTERVAL '5 minutes'"
                    + " WHERE srvy_drawup_no LIKE 'NEW-%'");
            s.execute("UPDATE inbox_message SET status = 'COMPLETED', updated_at = now() WHERE srvy_drawup_no LIKE 'NEW-%'");
        }
    }

    @AfterAll
    static void drop() throws SQLException {
        try (Connection admin = DriverManager.getConnection(EmbeddedServices.get().jdbcUrl(), EmbeddedServices.DB_USER, "");
             Statement s = admin.createStatement()) {
            s.execute("DROP DATABASE " + database + " WITH (FORCE)");
        }
    }

    static Connection connect() throws SQLException {
        return DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
    }

    @Test
    void aVacuumOfTheTableRemovesTheSweepsDeadIndexEntries() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            long deadPages;
            try (ResultSet rs = s.executeQuery("SELECT count(DISTINCT (ctid::text::point)[0]) FROM inbox_message"
                    + " WHERE srvy_drawup_no LIKE 'NEW-%'")) {
                rs.next();
                deadPages = rs.getLong(1);
            }
            long pages = read(s, "SELECT relpages FROM pg_class WHERE relname = 'inbox_message'");
            // the case PostgreSQL's default skips index cleanup for: dead rows on under 2 % of the pages
            assertThat(deadPages * 100).as("pages with the messages' dead rows, of %d", pages).isLessThan(2 * pages);

            s.execute("VACUUM inbox_message"); // no options: what autovacuum runs, under the table's own settings

            // the first tick after it: the due-retry and lost-event sweeps' SELECTs (republish-*.sql)
            long failedSweep = pagesRead(s, "SELECT id FROM inbox_message WHERE status = 'FAILED'"
                    + " AND last_attempt_at < now() - INTERVAL '30 seconds' ORDER BY last_attempt_at LIMIT 500 FOR UPDATE SKIP LOCKED");
            long receivedSweep = pagesRead(s, "SELECT id FROM inbox_message WHERE status = 'RECEIVED'"
                    + " AND created_at < now() - INTERVAL '60 seconds' ORDER BY created_at LIMIT 500 FOR UPDATE SKIP LOCKED");
            // with the 2,000 dead entries left in the indexes (PostgreSQL's default here) the due-retry sweep read 62
            // pages, a number that grows with every message until a vacuum cleans the indexes
            assertThat(failedSweep).as("pages the due-retry sweep read").isLessThan(20);
            assertThat(receivedSweep).as("pages the lost-event sweep read").isLessThan(20);
        }
    }

    @Test
    void theTableIsVacuumedByAFixedNumberOfDeadRows() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'inbox_message'")) {
            rs.next();
            assertThat(rs.getString(1)).as("inbox_message's own settings").isNotNull();
            assertThat(rs.getString(1).split(",")).contains("autovacuum_vacuum_scale_factor=0",
                    "autovacuum_vacuum_threshold=20000", "vacuum_index_cleanup=on");
        }
    }

    private static long read(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
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
