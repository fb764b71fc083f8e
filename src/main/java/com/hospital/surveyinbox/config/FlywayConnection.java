package com.hospital.surveyinbox.config;

import java.util.Properties;
import org.springframework.boot.autoconfigure.flyway.FlywayConfigurationCustomizer;
import org.springframework.boot.autoconfigure.jdbc.DataSourceProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * Flyway migrates on a connection of its own, not one of the request pool's: the pool's 4 s socket timeout
 * bounds a reception's statement, and would fail any migration step that takes longer on a big table (a
 * crash loop on every rolling update). Flyway's connection has no socket or statement timeout, and a short
 * {@code lock_timeout} ({@code adapter.migration.lock-timeout}) instead: a DDL statement that cannot get its
 * lock at once fails (the next start retries) rather than queueing every writer of the table behind it.
 * Indexes are built {@code CONCURRENTLY}, outside a transaction (see {@code db/migration}), so building one
 * never blocks inserts.
 */
@Configuration(proxyBeanMethods = false)
public class FlywayConnection {

    @Bean
    FlywayConfigurationCustomizer flywayOwnConnection(DataSourceProperties dataSource, javax.sql.DataSource main,
                                                      AdapterProperties properties,
                                                      org.springframework.core.env.Environment environment) {
        return configuration -> {
            if (environment.getProperty("spring.flyway.url") != null) {
                return; // a Flyway connection of the operator's own (spring.flyway.url/user/password) is used as given
            }
            // the main pool's driver properties (sslmode, currentSchema, …), less its socket timeout
            Properties driver = new Properties();
            try {
                if (main.isWrapperFor(com.zaxxer.hikari.HikariDataSource.class)) {
                    driver.putAll(main.unwrap(com.zaxxer.hikari.HikariDataSource.class).getDataSourceProperties());
                }
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
            configure(configuration, dataSource.determineUrl(), dataSource.determineUsername(), dataSource.determinePassword(),
                    properties.getMigration().getLockTimeout(), driver);
        };
    }

    /**
     * Flyway as the service runs it (also what {@code MigrationOnBigTableTest} migrates with). Flyway's own lock
     * is a session-level advisory lock, not its default transactional one: a CREATE INDEX CONCURRENTLY waits
     * for every open transaction, Flyway's lock-holding one included, and would wait for ever.
     */
    public static org.flywaydb.core.api.configuration.FluentConfiguration configure(
            org.flywaydb.core.api.configuration.FluentConfiguration configuration, String url, String username,
            String password, java.time.Duration lockTimeout, Properties driver) {
        Properties properties = new Properties();
        properties.putAll(driver);
        // the URL's options and socketTimeout (which the driver would let win) become properties, so the bounds
        // below are appended to what the URL asked for instead of being replaced by it
        SimpleDriverDataSource flyway = new SimpleDriverDataSource(new org.postgresql.Driver(),
                MainPoolStatementBound.liftFromUrl(url, properties), username, password);
        properties.setProperty("socketTimeout", "0");
        properties.setProperty("tcpKeepAlive", "true");
        properties.setProperty("logServerErrorDetail", "false");
        properties.setProperty("ApplicationName", "survey-inbox-adapter migration");
        String options = properties.getProperty("options", "").strip();
        // the server's keepalive probes too: a migrating pod whose node dies would otherwise hold Flyway's session lock
        // (and V12's loop) on the server until the OS's keepalive (2 h), every new pod waiting for it in vain
        properties.setProperty("options", (options + " -c lock_timeout=" + lockTimeout.toMillis() + " -c statement_timeout=0"
                + " -c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3").strip());
        flyway.setConnectionProperties(properties);
        return configuration.dataSource(flyway).callbacks(new DropInvalidIndexes())
                .configuration(java.util.Map.of("flyway.postgresql.transactional.lock", "false"));
    }

    /**
     * A {@code CREATE INDEX CONCURRENTLY} cut short (the pod stopped mid-build) leaves an INVALID index that
     * {@code IF NOT EXISTS} would then skip for ever: such indexes are dropped (concurrently) before migrating —
     * except one still being built (another pod's migration, which holds Flyway's lock).
     */
    static final class DropInvalidIndexes implements org.flywaydb.core.api.callback.Callback {

        private static final String INVALID = """
                SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
                  FROM pg_index i
                  JOIN pg_class c ON c.oid = i.indexrelid
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE NOT i.indisvalid
                   AND n.nspname = current_schema()
                   AND i.indexrelid NOT IN (SELECT index_relid FROM pg_stat_progress_create_index)
                """;

        @Override
        public boolean supports(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            return event == org.flywaydb.core.api.callback.Event.BEFORE_MIGRATE;
        }

        @Override
        public boolean canHandleInTransaction(org.flywaydb.core.api.callback.Event event,
                                              org.flywaydb.core.api.callback.Context context) {
            return false;
        }

        @Override
        public void handle(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            try (java.sql.Connection connection = context.getConfiguration().getDataSource().getConnection();
                 java.sql.Statement statement = connection.createStatement()) {
                connection.setAutoCommit(true);
                java.util.List<String> invalid = new java.util.ArrayList<>();
                try (java.sql.ResultSet rs = statement.executeQuery(INVALID)) {
                    while (rs.next()) {
                        invalid.add(rs.getString(1));
                    }
                }
                for (String index : invalid) {
                    org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).warn("Dropping invalid index {} (a build cut short)", index);
                    statement.execute("DROP INDEX CONCURRENTLY IF EXISTS " + index);
                }
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException("could not drop invalid indexes before migrating: " + LoggedFailure.describe(e), e);
            }
        }

        @Override
        public String getCallbackName() {
            return "drop-invalid-indexes";
        }
    }
}
