package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.config.FlywayConnection;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pod of the serving release that restarts (evicted, OOM-killed) or that the autoscaler adds to the old ReplicaSet
 * while a new release's pod migrates (an index built concurrently on a big table, for as long as older transactions
 * last) has nothing to apply: it starts at once. Flyway's migrate waited for Flyway's lock even with nothing pending,
 * past spring.flyway.lock-retry-count, and the pod crash-looped until the migration ended.
 */
class NothingToMigrateTest {

    private final EmbeddedServices services = EmbeddedServices.get();
    private final String database = "nothing_to_migrate_" + System.nanoTime();
    private final String url = services.migratedDatabase(database);

    @AfterEach
    void drop() {
        services.dropDatabase(database);
    }

    private FluentConfiguration flyway(String... locations) {
        return FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "", Duration.ofSeconds(5),
                new java.util.Properties()).locations(locations);
    }

    @Test
    void aStartWithNothingToApplyDoesNotWaitForAnotherPodsMigration() throws Exception {
        java.util.concurrent.ExecutorService pods = java.util.concurrent.Executors.newFixedThreadPool(3);
        CompletableFuture<Void> newRelease;
        CompletableFuture<Void> secondNew;
        try (Connection test = DriverManager.getConnection(url, EmbeddedServices.DB_USER, "")) {
            test.setAutoCommit(false);
            try (Statement s = test.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(424242)");
            }
            // the new release's pod: its V9999 runs (Flyway's lock held) until the test lets it finish
            newRelease = CompletableFuture.runAsync(() ->
                    FlywayConnection.migrate(flyway("classpath:db/migration", "classpath:db/held-migration").load()), pods);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> newRelease.isDone() || count(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                            + " AND query LIKE '%pg_advisory_xact_lock(424242)%' AND pid <> pg_backend_pid()") == 1);
            assertThat(newRelease).as("the new release's migration runs").isNotDone();

            // meanwhile a second pod of the new release (it needs V9999: it waits) and one of the serving release start
            secondNew = CompletableFuture.runAsync(() ->
                    FlywayConnection.migrate(flyway("classpath:db/migration", "classpath:db/held-migration").load()), pods);
            CompletableFuture<Void> serving = CompletableFuture.runAsync(() ->
                    FlywayConnection.migrate(flyway("classpath:db/migration").load()), pods);
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(serving::isDone);
            serving.join();
            assertThat(newRelease).as("the other pod's migration still runs").isNotDone();
            assertThat(secondNew).as("a pod that needs the migration waits for it").isNotDone();
            test.rollback();
        } finally {
            pods.shutdown();
        }
        newRelease.join();
        secondNew.join();
        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE version = '9999' AND success")).isOne();
    }

    private long count(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
