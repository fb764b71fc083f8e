package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How a group's COMMIT that got no answer is settled ({@link InboxStore#committedAfterAll}), on a PostgreSQL of its
 * own that requires a synchronous standby which never answers (as a primary does while its standby stalls): every
 * commit with {@code synchronous_commit=on} waits for it.
 */
class UnansweredCommitTest {

    private static EmbeddedPostgres postgres;
    private static DataSource data;

    @BeforeAll
    static void startPrimaryWithoutItsStandby() throws Exception {
        postgres = EmbeddedPostgres.builder().setServerConfig("synchronous_commit", "on").start();
        data = postgres.getPostgresDatabase();
        try (Connection setup = data.getConnection(); Statement st = setup.createStatement()) {
            st.execute("CREATE TABLE accepted (id int)");
        }
        standby("ghost"); // by ALTER SYSTEM, not a start option: a start option would outrank its release
    }

    /** Requires the named synchronous standby (none: '') from the next connection on. */
    private static void standby(String names) {
        JdbcTemplate admin = new JdbcTemplate(data);
        admin.execute("ALTER SYSTEM SET synchronous_standby_names = '" + names + "'");
        admin.queryForObject("SELECT pg_reload_conf()", Boolean.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> names.equals(admin.queryForObject("SHOW synchronous_standby_names", String.class)));
    }

    /** The backend and transaction of a row inserted on {@code connection} and not committed. */
    private record Open(int pid, String xid) {
    }

    private static Open insertUncommitted(Connection connection, int id) throws SQLException {
        connection.setAutoCommit(false);
        try (Statement st = connection.createStatement()) {
            st.execute("INSERT INTO accepted VALUES (" + id + ")");
            try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), CAST(pg_current_xact_id() AS text)")) {
                rs.next();
                return new Open(rs.getInt(1), rs.getString(2));
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    /**
     * A COMMIT waiting for the synchronous standby is not ended: ended, it commits on the primary alone (its record
     * is flushed) and the commit log says "committed": the group was answered "stored" for rows a failover to the
     * standby loses. It is waited for and, still waiting, counted as not committed (the sender gets 503 and retries).
     */
    @Test
    void aCommitWaitingForTheStandbyIsNeitherEndedNorAnsweredAsStored() throws Exception {
        JdbcTemplate other = new JdbcTemplate(data);
        Connection group;
        int pid;
        String xid;
        CompletableFuture<Void> commit;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        do { // again if this COMMIT came before the server's processes had read the required standby (a reload is async)
            assertThat(System.nanoTime() - deadline).as("a COMMIT waiting for the standby within 60 s").isNegative();
            group = data.getConnection();
            Open open = insertUncommitted(group, 1);
            pid = open.pid();
            xid = open.xid();
            Connection committing = group;
            commit = CompletableFuture.runAsync(() -> {
                try {
                    committing.commit();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            int waiting = pid;
            CompletableFuture<Void> sent = commit;
            await().atMost(Duration.ofSeconds(20)).until(() -> sent.isDone() || "SyncRep".equals(
                    other.queryForObject("SELECT wait_event FROM pg_stat_activity WHERE pid = ?", String.class, waiting)));
            if (commit.isDone()) {
                group.close(); // committed before the standby was required: this one is done with
            }
        } while (commit.isDone());

        assertThat(InboxStore.committedAfterAll(other, pid, xid)).as("answered as stored").isFalse();
        assertThat(other.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Integer.class, pid))
                .as("the COMMIT's backend, still waiting for the standby").isEqualTo(1);
        assertThat(commit).isNotDone();

        // the standby requirement lifted: the COMMIT completes as it would once the standby answers
        standby("");
        try {
            commit.get(20, TimeUnit.SECONDS);
            assertThat(other.queryForObject("SELECT pg_xact_status(CAST(? AS xid8))", String.class, xid)).isEqualTo("committed");
        } finally {
            group.close();
            standby("ghost");
        }
    }

    /** A COMMIT that never reached its backend (idle in its transaction): the backend is ended, nothing committed. */
    @Test
    void aTransactionTheCommitNeverReachedIsEndedAndNotCommitted() throws Exception {
        try (Connection group = data.getConnection()) {
            Open open = insertUncommitted(group, 2);
            int pid = open.pid();
            String xid = open.xid();
            JdbcTemplate other = new JdbcTemplate(data);
            assertThat(InboxStore.committedAfterAll(other, pid, xid)).isFalse();
            int ended = pid; // its transaction is gone at once, its process a moment later
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    other.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Integer.class, ended) == 0);
            assertThat(other.queryForObject("SELECT count(*) FROM accepted WHERE id = 2", Integer.class)).isZero();
        }
    }
}
