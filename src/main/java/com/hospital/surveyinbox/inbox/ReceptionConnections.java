package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The connections receptions commit on: a pool of their own ({@code adapter.reception.pool-size}), a copy of
 * the main pool's settings (URL, credentials, socket timeout, …). Why: with a slow database the 16 workers sit
 * in SQL holding the main pool's connections, and a reception waited for one until it answered 503 although
 * the database would have taken its row. Here no other holder can take a reception's connection. Not a
 * {@link DataSource} bean (that would turn Spring Boot's own pool off); metrics as {@code hikaricp_*} with
 * {@code pool="reception"}. Used by {@link InboxStore} for the inserts and what they read in the same breath.
 */
@Component
public class ReceptionConnections implements DisposableBean {

    private final DataSource dataSource;
    private final HikariDataSource own;
    private final java.time.Duration statementBound;

    /** A reception's transaction left open this long with nothing sent is its pod's, gone (ms): the server ends it. */
    static final long IDLE_IN_TRANSACTION_MILLIS = 10_000;

    public ReceptionConnections(DataSource main, AdapterProperties properties, MeterRegistry meters) {
        HikariDataSource hikari = unwrap(main);
        if (hikari == null) {
            this.dataSource = main; // not Hikari (a test's own DataSource): share it
            this.own = null;
            this.statementBound = java.time.Duration.ofSeconds(3);
            return;
        }
        HikariConfig config = new HikariConfig();
        hikari.copyStateTo(config);
        // every statement on these connections (a lock wait included) ends on the server before the socket timeout
        // ends it on the client: a statement the client gave up on can never commit later (a 503 is the truth)
        int socketSeconds = Integer.parseInt(String.valueOf(config.getDataSourceProperties().getOrDefault("socketTimeout", "4")));
        this.statementBound = java.time.Duration.ofMillis(boundMillis(socketSeconds));
        java.util.Properties dataSourceProperties = new java.util.Properties();
        dataSourceProperties.putAll(config.getDataSourceProperties());
        // and a group whose pod vanished before its COMMIT gives its subjects' locks back within seconds, not hours
        dataSourceProperties.setProperty("options", com.hospital.surveyinbox.config.MainPoolStatementBound.durable(
                com.hospital.surveyinbox.config.MainPoolStatementBound.abandonable(
                        com.hospital.surveyinbox.config.MainPoolStatementBound.withBoundMillis(
                                (String) dataSourceProperties.get("options"), statementBound.toMillis()),
                        IDLE_IN_TRANSACTION_MILLIS)));
        // of its own: copyStateTo shares the main pool's Properties object, and setDataSourceProperties writes into
        // it, so the receptions' bound would have become the main pool's too whenever that one had not started yet
        ownProperties(config, dataSourceProperties);
        config.setPoolName("reception");
        config.setMaximumPoolSize(properties.getReception().getPoolSize());
        config.setMinimumIdle(properties.getReception().getPoolSize());
        config.setMetricRegistry(null);
        config.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(meters));
        // a reception waits for its connection no longer than it waits for its row
        config.setConnectionTimeout(Math.max(250, Math.min(hikari.getConnectionTimeout(),
                properties.getReception().getStoreTimeout().toMillis())));
        config.setInitializationFailTimeout(-1); // a database down at start must not stop the service from starting
        this.own = new HikariDataSource(config);
        this.dataSource = own;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** The pool's own figures (connections, waiting threads), or null when receptions share the main pool. */
    public com.zaxxer.hikari.HikariPoolMXBean pool() {
        return own == null ? null : own.getHikariPoolMXBean();
    }

    /**
     * The receptions' statement bound for a socket timeout in seconds: a second under it, half a second under a 1 s one
     * (it was 3 s there: the client gave up first, answered 503, and the INSERT committed after, so the sender's retry
     * stored the message twice), 3 s without one (0; prod refuses that).
     */
    static long boundMillis(int socketSeconds) {
        return socketSeconds >= 2 ? (socketSeconds - 1) * 1000L : socketSeconds == 1 ? 500L : 3000L;
    }

    /** What any one statement on these connections may take at most ({@link #boundMillis}). */
    public java.time.Duration statementBound() {
        return statementBound;
    }

    private static void ownProperties(HikariConfig config, java.util.Properties properties) {
        try {
            java.lang.reflect.Field field = HikariConfig.class.getDeclaredField("dataSourceProperties");
            field.setAccessible(true);
            field.set(config, properties);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("HikariCP's config changed: the receptions' pool cannot have data-source "
                    + "properties of its own", e);
        }
    }

    private static HikariDataSource unwrap(DataSource main) {
        try {
            return main.isWrapperFor(HikariDataSource.class) ? main.unwrap(HikariDataSource.class) : null;
        } catch (java.sql.SQLException e) {
            return null;
        }
    }

    @Override
    public void destroy() {
        if (own != null) {
            own.close();
        }
    }
}
