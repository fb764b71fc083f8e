package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.inbox.ReceptionConnections;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The database as a failover or a DBA leaves it: connections that reach a read-only server (a standby, a demoted
 * primary), and a role whose commits do not wait for the disk. Set on the service's own role, as a DBA would.
 */
class DatabaseAfterFailoverTest extends IntegrationTest {

    @Autowired
    DataSource dataSource;

    @Autowired
    ReceptionConnections receptions;

    /** A statement as the administrator, on a connection of its own that is never read-only. */
    private void asAdministrator(String sql) throws Exception {
        try (Connection connection = services().dataSource().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("SET default_transaction_read_only = off");
            statement.execute(sql);
        }
    }

    private String role() {
        return '"' + jdbc.queryForObject("SELECT current_user", String.class) + '"';
    }

    /** Every connection of both pools opened afresh (the settings of a role apply when a session starts). */
    private void reopenConnections() throws Exception {
        dataSource.unwrap(HikariDataSource.class).getHikariPoolMXBean().softEvictConnections();
        receptions.pool().softEvictConnections();
    }

    /**
     * A read-only database (25006) is "not now", a 503 the sender retries: it was a 500 "a retry cannot fix", and a
     * sender trusting it never sent the message again. The connections it refused leave the pool at once: HikariCP
     * kept them (a standby passes its keepalive) for their 30-minute lifetime, every reception on them a refusal.
     */
    @Test
    void aReadOnlyDatabaseIsA503AndTheServiceRecoversByItself() throws Exception {
        String role = role();
        asAdministrator("ALTER ROLE " + role + " SET default_transaction_read_only = on");
        try {
            reopenConnections();
            ServiceClient.Reply refused = client.receive(ServiceClient.message(uniqueSubject("READONLY"), ""));
            assertThat(refused.status()).as(refused.body()).isEqualTo(503);
        } finally {
            asAdministrator("ALTER ROLE " + role + " RESET default_transaction_read_only");
        }
        try {
            // the primary is back: the connections opened read-only are refused once each and replaced, in the
            // receptions' pool and in the main one (workers, jobs: a write on each until one succeeds)
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> client.receive(ServiceClient.message(uniqueSubject("WRITABLE"), "")).status() == 200);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                    .until(() -> jdbc.update("UPDATE inbox_message SET updated_at = updated_at WHERE id = -1") == 0);
        } finally {
            reopenConnections(); // nothing opened under the role's setting stays for the next tests
        }
    }

    /** Commits wait for the disk whatever the role says: a 200 is never lost to a DBA's synchronous_commit=off. */
    @Test
    void theServicesSessionsCommitDurablyWhateverTheRoleSays() throws Exception {
        String role = role();
        asAdministrator("ALTER ROLE " + role + " SET synchronous_commit = off");
        try {
            reopenConnections();
            assertThat(new JdbcTemplate(receptions.dataSource()).queryForObject("SHOW synchronous_commit", String.class)).isEqualTo("on");
            assertThat(jdbc.queryForObject("SHOW synchronous_commit", String.class)).isEqualTo("on");
            try (Connection connection = services().dataSource().getConnection()) {
                assertThat(new JdbcTemplate(new org.springframework.jdbc.datasource.SingleConnectionDataSource(connection, true))
                        .queryForObject("SHOW synchronous_commit", String.class)).as("the role's own setting").isEqualTo("off");
            }
        } finally {
            asAdministrator("ALTER ROLE " + role + " RESET synchronous_commit");
            reopenConnections();
        }
    }
}
