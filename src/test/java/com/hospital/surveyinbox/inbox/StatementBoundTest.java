package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.config.MainPoolStatementBound;
import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.IntegrationTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A statement on the main pool that waits longer than the client does ends on the server too. Before, the socket
 * timeout (4 s) only made the client give up: PostgreSQL kept the statement waiting for its lock, with its
 * snapshot and its row locks, for as long as the lock was held (in the big-table benchmark, redelivery count folds
 * for minutes, and vacuum could not clean behind them).
 */
class StatementBoundTest extends IntegrationTest {

    @org.springframework.beans.factory.annotation.Autowired
    ReceptionConnections receptions;

    @org.springframework.beans.factory.annotation.Autowired
    javax.sql.DataSource mainPool;

    @Test
    void aStatementTheClientWouldGiveUpOnIsCancelledOnTheServerAndLeavesNothingRunning() throws Exception {
        assertThat(jdbc.queryForObject("SHOW statement_timeout", String.class)).isEqualTo("3500ms");
        assertThat(jdbc.queryForObject("SHOW lock_timeout", String.class)).isEqualTo("3500ms");
        // the receptions' pool has its own (a second under the socket timeout), and never wrote it into the main one
        org.springframework.jdbc.core.JdbcTemplate receptionJdbc = new org.springframework.jdbc.core.JdbcTemplate(receptions.dataSource());
        assertThat(receptionJdbc.queryForObject("SHOW statement_timeout", String.class)).isEqualTo("3s");
        assertThat(mainPool.unwrap(com.zaxxer.hikari.HikariDataSource.class).getDataSourceProperties().getProperty("options"))
                .isEqualTo("-c statement_timeout=3500 -c lock_timeout=3500 -c idle_in_transaction_session_timeout=30000"
                        + " -c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3 -c synchronous_commit=on");
        assertThat(jdbc.queryForObject("SHOW idle_in_transaction_session_timeout", String.class)).isEqualTo("30s");

        String tag = "bound-" + UUID.randomUUID();
        try (Connection holder = DriverManager.getConnection(services().jdbcUrl(), EmbeddedServices.DB_USER, "");
             Connection observer = DriverManager.getConnection(services().jdbcUrl(), EmbeddedServices.DB_USER, "");
             Statement hold = holder.createStatement()) {
            holder.setAutoCommit(false);
            // what a long transaction elsewhere does: holds the row the redelivery tick's count fold updates
            hold.execute("SELECT total FROM inbox_status_total WHERE status = 'COMPLETED' FOR UPDATE");
            Throwable failure = catchThrowable(() -> jdbc.update(
                    "/* " + tag + " */ UPDATE inbox_status_total SET total = total WHERE status = 'COMPLETED'"));

            // the server ended it (statement_timeout: query_canceled, or lock_timeout: lock_not_available, whichever
            // fires first), before the client's socket timeout would have (that one is 08006, connection failure)
            assertThat(failure).isNotNull();
            assertThat(sqlState(failure)).isIn("57014", "55P03");
            // and nothing of it is left on the server while the lock is still held
            await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(50)).until(() -> running(observer, tag) == 0);
            holder.rollback();
        }
    }

    /** The receptions' bound is under the socket timeout for every timeout a pod may be given (0: none, 3 s). */
    @Test
    void theReceptionsBoundIsUnderEverySocketTimeout() {
        for (int socketSeconds = 1; socketSeconds <= 120; socketSeconds++) {
            assertThat(ReceptionConnections.boundMillis(socketSeconds)).as("socketTimeout=%d", socketSeconds)
                    .isPositive().isLessThan(socketSeconds * 1000L);
        }
        assertThat(ReceptionConnections.boundMillis(4)).isEqualTo(3000L);
        assertThat(ReceptionConnections.boundMillis(0)).isEqualTo(3000L);
    }

    /**
     * A pod whose node dies (or is cut off) between its group's subject locks and its COMMIT sends nothing more and
     * closes nothing: the server ends that transaction after 10 s with nothing sent, and the subjects' next reception
     * is stored. Before, the locks stayed until the OS's keepalive gave up (2 h): every reception of those subjects,
     * on every pod, waited its lock bound and was answered 503, and with it every group it landed in.
     */
    @Test
    void aReceptionTransactionWhosePodVanishedGivesItsSubjectsBackWithinSeconds() throws Exception {
        String subject = uniqueSubject("VANISHED");
        Connection abandoned = receptions.dataSource().getConnection();
        try (Statement st = abandoned.createStatement()) {
            abandoned.setAutoCommit(false);
            // what a group does first (InboxStore.SUBJECT_LOCKS), then its pod goes silent: nothing more is sent
            st.execute("SELECT pg_advisory_xact_lock(" + InboxStore.SUBJECT_LOCK_SPACE + ", hashtext('" + subject + "'))");
            int pid;
            try (var rs = st.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                pid = rs.getInt(1);
            }
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Long.class, pid) == 0);
            assertThat(client.accept(com.hospital.surveyinbox.support.ServiceClient.message(subject, "P-" + subject, ""))).isNotBlank();
        } finally {
            try {
                abandoned.close();
            } catch (SQLException ended) { // its rollback meets the ended session: the pool drops it
                assertThat(ended.getMessage()).contains("idle-in-transaction timeout");
            }
        }
    }

    @Test
    void theBoundFollowsTheSocketTimeoutAndNoneMeansNone() {
        assertThat(MainPoolStatementBound.withBound("", 4)).isEqualTo("-c statement_timeout=3500 -c lock_timeout=3500");
        assertThat(MainPoolStatementBound.withBound("-c search_path=inbox", 10))
                .isEqualTo("-c search_path=inbox -c statement_timeout=9500 -c lock_timeout=9500");
        assertThat(MainPoolStatementBound.withBound(null, 0)).isEmpty();
        assertThat(MainPoolStatementBound.withBound("-c search_path=inbox", 0)).isEqualTo("-c search_path=inbox");
    }

    /** The driver lets a URL parameter win over a data source property: options and socketTimeout in the URL keep the bound. */
    @Test
    void optionsAndSocketTimeoutInTheJdbcUrlKeepTheBound() throws Exception {
        String url = services().jdbcUrl();
        try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource()) {
            pool.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "options=-c%20work_mem%3D3MB&socketTimeout=3");
            pool.setUsername(EmbeddedServices.DB_USER);
            pool.setMaximumPoolSize(1);
            new MainPoolStatementBound().postProcessAfterInitialization(pool, "dataSource");
            org.springframework.jdbc.core.JdbcTemplate viaUrl = new org.springframework.jdbc.core.JdbcTemplate(pool);
            assertThat(viaUrl.queryForObject("SHOW work_mem", String.class)).isEqualTo("3MB");
            assertThat(viaUrl.queryForObject("SHOW statement_timeout", String.class)).isEqualTo("2500ms");
            assertThat(viaUrl.queryForObject("SHOW lock_timeout", String.class)).isEqualTo("2500ms");
            assertThat(pool.getJdbcUrl()).doesNotContain("options").doesNotContain("socketTimeout");
        }
        assertThat(MainPoolStatementBound.liftFromUrl("jdbc:postgresql://db/inbox?ssl=true&options=-c%20x%3D1&sslmode=require",
                new java.util.Properties())).isEqualTo("jdbc:postgresql://db/inbox?ssl=true&sslmode=require");
        // what the driver does not read (its parameter names are case-sensitive) or has no value is left to it
        java.util.Properties untouched = new java.util.Properties();
        assertThat(MainPoolStatementBound.liftFromUrl("jdbc:postgresql://db/inbox?SocketTimeout=3&OPTIONS=x&socketTimeout=",
                untouched)).isEqualTo("jdbc:postgresql://db/inbox?SocketTimeout=3&OPTIONS=x&socketTimeout=");
        assertThat(untouched).isEmpty();
        // a repeated parameter: the driver takes the last value, so does the lift, and no occurrence stays behind
        java.util.Properties repeated = new java.util.Properties();
        assertThat(MainPoolStatementBound.liftFromUrl("jdbc:postgresql://db/inbox?socketTimeout=&ssl=true&socketTimeout=5",
                repeated)).isEqualTo("jdbc:postgresql://db/inbox?ssl=true");
        assertThat(repeated).containsEntry("socketTimeout", "5");
    }

    /** Flyway's connection too: a URL's options and socketTimeout never undo its own bounds (no statement bound, a lock bound). */
    @Test
    void theMigrationsConnectionKeepsItsBoundsWhateverTheUrlSays() throws Exception {
        String url = services().jdbcUrl();
        var flyway = com.hospital.surveyinbox.config.FlywayConnection.configure(org.flywaydb.core.Flyway.configure(),
                url + (url.contains("?") ? "&" : "?") + "options=-c%20statement_timeout%3D1000%20-c%20work_mem%3D3MB&socketTimeout=2",
                EmbeddedServices.DB_USER, "", Duration.ofSeconds(5), new java.util.Properties());
        try (Connection migration = flyway.getDataSource().getConnection(); Statement show = migration.createStatement()) {
            assertThat(value(show, "SHOW statement_timeout")).isEqualTo("0");
            assertThat(value(show, "SHOW lock_timeout")).isEqualTo("5s");
            assertThat(value(show, "SHOW idle_in_transaction_session_timeout")).isEqualTo("0");
            assertThat(value(show, "SHOW work_mem")).isEqualTo("3MB");
            assertThat(migration.getNetworkTimeout()).isZero();
        }
    }

    private static String value(Statement statement, String sql) throws SQLException {
        try (var rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** The documented env var SPRING_DATASOURCE_HIKARI_DATASOURCEPROPERTIES_SOCKETTIMEOUT binds as a lower-case key. */
    @Test
    void aDriverPropertyFromAnEnvironmentVariableGetsTheDriversSpelling() {
        java.util.Properties properties = new java.util.Properties();
        properties.setProperty("sockettimeout", "10");
        properties.setProperty("tcpKeepAlive", "true");
        properties.setProperty("not-a-driver-property", "x");
        MainPoolStatementBound.normalizeKeys(properties);
        assertThat(properties).containsEntry("socketTimeout", "10").containsEntry("tcpKeepAlive", "true")
                .containsEntry("not-a-driver-property", "x").doesNotContainKey("sockettimeout").hasSize(3);
    }

    private static long running(Connection observer, String tag) throws SQLException {
        try (var ps = observer.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE ?")) {
            ps.setString(1, "%" + tag + "%");
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String sqlState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }
}
