package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.config.FlywayConnection;
import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.FreezableTcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An index build of a migration (CREATE INDEX CONCURRENTLY, outside a transaction) that does not finish, on a real
 * PostgreSQL: it waits for the transactions older than it, as it does behind any long transaction on a live table.
 * Cancelled there with an error, Flyway recorded the migration as failed and refused every later start until
 * someone ran {@code flyway repair} (every new pod of the rollout crash-looped); left by a pod that vanished, it kept
 * running on the server, holding Flyway's lock, and every next pod waited for that lock in vain.
 */
// a migration that waits for ever (an index build behind Flyway's own transaction) fails the test, not the build
@org.junit.jupiter.api.Timeout(value = 120, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
class FailedIndexBuildTest {

    /** Advisory locks in this test's database (Flyway's lock is one). */
    private static final String ADVISORY = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

    private final EmbeddedServices services = EmbeddedServices.get();
    private final String database = "failed_build_" + System.nanoTime();
    private final String url = services.createDatabase(database);

    @AfterEach
    void drop() {
        services.dropDatabase(database);
    }

    private static org.flywaydb.core.api.configuration.FluentConfiguration flyway(String url) {
        return FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "", Duration.ofSeconds(5),
                new java.util.Properties()).locations("classpath:db/migration");
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(url, EmbeddedServices.DB_USER, "");
    }

    /** A transaction that wrote to the inbox and stays open: an index build of the table waits for it. */
    private Connection olderTransaction() throws SQLException {
        Connection holder = connect();
        holder.setAutoCommit(false);
        try (Statement s = holder.createStatement()) {
            s.execute("INSERT INTO inbox_message (srvy_drawup_no, msg_type) VALUES ('HOLD-1', 'SEND')");
        }
        return holder;
    }

    /** The migration's index build, once it waits for the older transaction: its backend's pid. */
    private long waitingBuild() {
        long[] pid = new long[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                            + " AND query ILIKE 'CREATE INDEX CONCURRENTLY%'")) {
                if (rs.next()) {
                    pid[0] = rs.getLong(1);
                    return true;
                }
                return false;
            }
        });
        return pid[0];
    }

    private long count(String sql) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aBuildCancelledWithAnErrorRunsAgainOnTheNextStart() throws Exception {
        FlywayConnection.migrate(flyway(url).target("9").load());
        try (Connection holder = olderTransaction()) {
            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> FlywayConnection.migrate(flyway(url).load()));
            long build = waitingBuild();
            // an operator cancels the statement holding up the rollout
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("SELECT pg_cancel_backend(" + build + ")");
            }
            assertThatThrownBy(first::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(FlywayException.class);
            holder.rollback();
        }
        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE version = '10' AND NOT success")).isOne();
        assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).as("the build's invalid index").isOne();
        // a Flyway that would not drop the invalid index first (an operator's own spring.flyway.url) is refused as
        // before: run again, IF NOT EXISTS would skip the invalid index and record success
        assertThatThrownBy(() -> FlywayConnection.migrate(Flyway.configure().dataSource(url, EmbeddedServices.DB_USER, "")
                .locations("classpath:db/migration").load())).isInstanceOf(FlywayException.class);
        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE version = '10' AND NOT success")).isOne();

        // the next start: the failed build runs again (its invalid index dropped first), and the rest after it
        FlywayConnection.migrate(flyway(url).load());

        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE NOT success")).isZero();
        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE version = '10' AND success")).isOne();
        assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).isZero();
        assertThat(count("SELECT count(*) FROM pg_indexes WHERE indexname = 'inbox_message_subject_idx'")).isOne();
        assertThat(flyway(url).load().info().pending()).isEmpty();
    }

    @Test
    void aBuildWhosePodVanishedEndsAndFreesFlywaysLock() throws Exception {
        FlywayConnection.migrate(flyway(url).target("9").load());
        try (FreezableTcpProxy proxy = new FreezableTcpProxy(services.postgresPort());
             Connection holder = olderTransaction()) {
            String proxied = url.replace(":" + services.postgresPort() + "/", ":" + proxy.port() + "/");
            assertThat(proxied).isNotEqualTo(url);
            CompletableFuture<Void> vanishing = CompletableFuture.runAsync(() -> FlywayConnection.migrate(flyway(proxied).load()));
            long build = waitingBuild();
            assertThat(count(ADVISORY + " AND granted")).as("Flyway's lock").isPositive();

            proxy.cutOff(); // the pod's node is gone: its connections are closed, its transaction's holder still open

            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> count("SELECT count(*) FROM pg_stat_activity WHERE pid = " + build) == 0);
            assertThat(count(ADVISORY)).as("Flyway's lock").isZero();
            assertThatThrownBy(vanishing::join).isInstanceOf(CompletionException.class);
            holder.rollback();
        }
        // the next pod migrates
        FlywayConnection.migrate(flyway(url).load());
        assertThat(flyway(url).load().info().pending()).isEmpty();
        assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).isZero();
    }
    /**
     * The invalid index a cancelled build left, while the transaction that held the build up is still open (a
     * pg_dump): a start with nothing to build (the serving release restarting, evicted, OOM-killed) starts. It
     * dropped the index first, outside Flyway's lock, with Flyway's 5 s lock_timeout: the drop waited for that
     * transaction, timed out, and failed every start until the transaction ended.
     */
    @Test
    void aStartWithNothingToBuildIsNotHeldByTheInvalidIndexALongTransactionLeft() throws Exception {
        FlywayConnection.migrate(flyway(url).target("9").load());
        try (Connection holder = olderTransaction()) {
            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> FlywayConnection.migrate(flyway(url).target("10").load()));
            long build = waitingBuild();
            try (Connection c = connect(); Statement s = c.createStatement()) {
                s.execute("SELECT pg_cancel_backend(" + build + ")");
            }
            assertThatThrownBy(first::join).isInstanceOf(CompletionException.class);
            assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).isOne();

            // the serving release restarts while the transaction is still open
            FlywayConnection.migrate(flyway(url).target("9").load());

            assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).as("left for the build").isOne();
            holder.rollback();
        }
        FlywayConnection.migrate(flyway(url).target("10").load());
        assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).isZero();
        assertThat(count("SELECT count(*) FROM pg_indexes WHERE indexname = 'inbox_message_subject_idx'")).isOne();
    }

    /**
     * A second pod started while the first one's build ran (a surge, the autoscaler) waits for Flyway's lock; the
     * first one vanishes mid-build, leaving its index INVALID. The second takes the lock and builds the index: it
     * recorded the migration as done over the invalid index instead (IF NOT EXISTS skipped it), since the invalid
     * indexes were looked for once, before the lock, while the build was still running.
     */
    @Test
    void aPodThatWaitedOutAnotherPodsVanishedBuildBuildsTheIndex() throws Exception {
        FlywayConnection.migrate(flyway(url).target("9").load());
        CompletableFuture<Void> second;
        try (FreezableTcpProxy proxy = new FreezableTcpProxy(services.postgresPort());
             Connection holder = olderTransaction()) {
            String proxied = url.replace(":" + services.postgresPort() + "/", ":" + proxy.port() + "/");
            CompletableFuture<Void> vanishing = CompletableFuture.runAsync(() -> FlywayConnection.migrate(flyway(proxied).target("10").load()));
            long build = waitingBuild();
            second = CompletableFuture.runAsync(() -> FlywayConnection.migrate(flyway(url).target("10").load()));
            // the second pod asks for Flyway's lock (past every step before it), the first one holding it
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> count(
                    "SELECT count(DISTINCT pid) FROM pg_stat_activity WHERE datname = current_database()"
                            + " AND query ILIKE '%pg_try_advisory_lock%' AND pid <> " + build) >= 1);

            proxy.cutOff();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> count("SELECT count(*) FROM pg_stat_activity WHERE pid = " + build) == 0);
            assertThatThrownBy(vanishing::join).isInstanceOf(CompletionException.class);
            holder.rollback();
        }
        second.join();
        assertThat(count("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).as("invalid indexes").isZero();
        assertThat(count("SELECT count(*) FROM pg_indexes WHERE indexname = 'inbox_message_subject_idx'")).isOne();
        assertThat(count("SELECT count(*) FROM flyway_schema_history WHERE version = '10' AND success")).isOne();
    }
}
