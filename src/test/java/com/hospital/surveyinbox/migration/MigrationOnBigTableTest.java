package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.EmbeddedServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * The migrations applied to a table that already holds 1,000,000 rows while a sender keeps inserting, as a
 * rolling update does to a database that has grown for months: no insert may wait on a migration's lock.
 * The database is first brought to V4 and filled, then migrated to the latest version on a connection set up
 * as the service sets up Flyway's ({@code config/FlywayConnection}: no socket timeout, a short lock timeout).
 * Reports the longest insert (a stall) in {@code target/migration-on-big-table.txt}. And a policy check: every
 * index a migration after V4 creates is built CONCURRENTLY.
 */
class MigrationOnBigTableTest {

    static final int ROWS = 1_000_000;

    @Test
    void migratingATableOfAMillionRowsNeverStallsTheInserts() throws Exception {
        EmbeddedServices services = EmbeddedServices.get();
        String database = "migration_big_" + System.nanoTime();
        String url = services.createDatabase(database);
        Flyway.configure().dataSource(url, EmbeddedServices.DB_USER, "").locations("classpath:db/migration")
                .target("4").load().migrate();
        try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement()) {
            // finished rows of 100,000 subjects over a month, each with its attempt
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload, status, attempts, created_at, updated_at)"
                    + " SELECT 'BIG-' || (g % 100000), 'SEND', NULL, 'COMPLETED', 1,"
                    + " now() - (g * INTERVAL '2 seconds'), now() - (g * INTERVAL '2 seconds')"
                    + " FROM generate_series(1, " + ROWS + ") g");
            s.execute("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome)"
                    + " SELECT id, 1, created_at, created_at, 'COMPLETED' FROM inbox_message");
            s.execute("VACUUM ANALYZE inbox_message");
            s.execute("VACUUM ANALYZE inbox_attempt");
        }

        AtomicBoolean sending = new AtomicBoolean(true);
        AtomicLong longestNanos = new AtomicLong();
        AtomicLong inserted = new AtomicLong();
        AtomicLong senderPid = new AtomicLong();
        // a failed insert ends the sender: kept, so the test fails on it (a dead sender is never seen waiting)
        java.util.concurrent.atomic.AtomicReference<Exception> senderFailure = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.CountDownLatch connected = new java.util.concurrent.CountDownLatch(1);
        Thread sender = new Thread(() -> {
            try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
                 PreparedStatement insert = c.prepareStatement(
                         "INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload) VALUES (?, 'SEND', ?)")) {
                try (Statement pid = c.createStatement(); var rs = pid.executeQuery("SELECT pg_backend_pid()")) {
                    rs.next();
                    senderPid.set(rs.getLong(1));
                }
                connected.countDown();
                while (sending.get()) {
                    long start = System.nanoTime();
                    insert.setString(1, "NEW-" + inserted.get());
                    insert.setBytes(2, "{}".getBytes());
                    insert.executeUpdate();
                    longestNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                    inserted.incrementAndGet();
                }
            } catch (Exception e) {
                senderFailure.set(e);
            }
        }, "migration-sender");
        sender.start();
        assertThat(connected.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        // what the sender's session waits for, sampled every 10 ms while the migrations run: an insert held by a
        // migration's lock (a plain CREATE INDEX holds them for its whole build) shows as wait_event_type Lock
        AtomicLong samples = new AtomicLong();
        AtomicLong lockSamples = new AtomicLong();
        java.util.concurrent.ScheduledExecutorService sampler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        Connection sampling = DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
        PreparedStatement waiting = sampling.prepareStatement(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = " + senderPid.get());
        sampler.scheduleAtFixedRate(() -> {
            try (var rs = waiting.executeQuery()) {
                if (rs.next() && "Lock".equals(rs.getString(1))) {
                    lockSamples.incrementAndGet();
                }
                samples.incrementAndGet();
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        }, 0, 10, java.util.concurrent.TimeUnit.MILLISECONDS);
        long migrating = System.nanoTime();
        try {
            com.hospital.surveyinbox.config.FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "",
                    java.time.Duration.ofSeconds(5), new java.util.Properties()).locations("classpath:db/migration").load().migrate();
        } finally {
            sending.set(false);
            sender.join(30_000);
            sampler.shutdown();
            assertThat(sampler.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            sampling.close();
        }
        long migrationMillis = (System.nanoTime() - migrating) / 1_000_000;
        long longestMillis = longestNanos.get() / 1_000_000;
        String report = "migrations after V4 on " + ROWS + " rows: " + migrationMillis + " ms; inserts meanwhile: "
                + inserted.get() + ", longest insert: " + longestMillis + " ms (goal < 500 ms); the sender seen waiting for a lock in "
                + lockSamples.get() + " of " + samples.get() + " samples";
        System.out.println(report);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/migration-on-big-table.txt"), report + "\n");

        assertThat(senderFailure.get()).as("an insert during the migrations").isNull();
        try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM pg_index WHERE NOT indisvalid")) {
            rs.next();
            assertThat(rs.getLong(1)).as("invalid indexes").isZero();
        }
        assertThat(inserted.get()).as("the sender kept inserting").isPositive();
        // a plain CREATE INDEX on the million rows holds the inserts for its whole build: seen waiting for its lock
        // in sample after sample. Not the longest insert's time (the goal, < 500 ms, reported above): on a
        // loaded machine a single insert took 932 ms with no lock in its way, failing a clean clone
        assertThat(samples.get()).as(report).isGreaterThan(20);
        // a few samples may catch the brief locks of a column added (2 of 404 measured); a build is hundreds of ms
        assertThat(lockSamples.get()).as(report).isLessThanOrEqualTo(15);
        try (Connection admin = DriverManager.getConnection(services.jdbcUrl(), EmbeddedServices.DB_USER, "");
             Statement s = admin.createStatement()) {
            s.execute("DROP DATABASE " + database + " WITH (FORCE)");
        }
    }

    @Test
    void everyIndexAMigrationAfterV4CreatesIsBuiltConcurrently() throws IOException {
        List<String> offenders = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/db/migration"))) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                int version = Integer.parseInt(name.substring(1, name.indexOf("__")).split("\\.")[0]);
                if (version <= 4) {
                    continue; // applied before this rule; their tables were small then
                }
                for (String line : Files.readAllLines(file)) {
                    String l = line.strip().toUpperCase();
                    if (l.startsWith("CREATE") && l.contains(" INDEX ") && !l.contains("CONCURRENTLY")) {
                        offenders.add(name + ": " + line.strip());
                    }
                }
            }
        }
        assertThat(offenders).isEmpty();
    }
}
