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
                // every database has the same migrations; migration 19 builds indexes CONCURRENTLY, which would wait
                // for ever for Flyway's own lock held in a transaction (Flyway 10+'s default): a session lock
                configuration.javaMigrations(new EarlierReleasedTexts())
                        .configuration(java.util.Map.of("flyway.postgresql.transactional.lock", "false"));
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

    /** Boot's migration at start: {@link #migrate} (earlier released texts accepted first: {@link EarlierReleasedTexts}). */
    @Bean
    org.springframework.boot.autoconfigure.flyway.FlywayMigrationStrategy flywayRerunsFailedBuilds(AdapterProperties properties) {
        return flyway -> migrate(flyway, properties.getMigration().getDatabaseWait());
    }

    /**
     * Migrates as the service does at start. A migration run outside a transaction (an index built
     * {@code CONCURRENTLY}: its {@code .sql.conf} says {@code executeInTransaction=false}) that failed with an
     * error — cancelled by an operator, a deadlock, the sort's disk full — is recorded as failed, and Flyway refuses
     * every later start ("Detected failed migration") until someone runs {@code flyway repair}: every new pod of the
     * rollout crash-looped. Such migrations are written to run again ({@code IF NOT EXISTS}; the invalid index left
     * behind is dropped first, {@link DropInvalidIndexes}), so their failed record is removed and they run again.
     * A failed migration that ran in a transaction was rolled back and never recorded. This is done only when Flyway
     * drops invalid indexes first (as this class configures it); otherwise {@code IF NOT EXISTS} would skip the
     * invalid index and record success. With an operator's own {@code spring.flyway.url} the start is refused as before.
     */
    public static void migrate(org.flywaydb.core.Flyway flyway) {
        org.flywaydb.core.api.configuration.Configuration configuration = flyway.getConfiguration();
        migrate(flyway, java.time.Duration.ofSeconds(flywayPauseSeconds(configuration.getConnectRetries(),
                configuration.getConnectRetriesInterval())));
    }

    /**
     * {@link #migrate(org.flywaydb.core.Flyway)}, waiting up to {@code databaseWait} for a database that cannot be
     * reached at first ({@code adapter.migration.database-wait}; Flyway's own connect-retries then cover a flap only).
     */
    public static void migrate(org.flywaydb.core.Flyway flyway, java.time.Duration databaseWait) {
        org.flywaydb.core.api.configuration.Configuration configuration = flyway.getConfiguration();
        java.util.Set<String> ranEarlierTexts = awaitRecordsRead(configuration, System.nanoTime() + databaseWait.toNanos());
        if (java.util.Arrays.stream(configuration.getCallbacks()).noneMatch(DropInvalidIndexes.class::isInstance)) {
            EarlierReleasedTexts.migrate(flyway, ranEarlierTexts);
            return;
        }
        for (org.flywaydb.core.api.MigrationInfo migration : flyway.info().all()) {
            if (migration.getState() == org.flywaydb.core.api.MigrationState.FAILED && migration.getVersion() != null
                    && (outsideTransaction(configuration, migration.getScript())
                        // migration 19 (Java) runs outside a transaction too, written to run again
                        || EarlierReleasedTexts.class.getName().equals(migration.getScript()))) {
                org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).warn(
                        "Migration {} failed on an earlier start, outside a transaction: its record is removed and it runs again",
                        migration.getScript());
                forgetFailed(configuration, migration.getVersion().getVersion());
            }
        }
        EarlierReleasedTexts.migrate(flyway, ranEarlierTexts);
    }

    /**
     * The migration records read before validating ({@link EarlierReleasedTexts#ranEarlierTexts}), the start's first
     * connection, tried again while the database cannot be reached ({@link #waitable}: class 08, 57P01-57P03, 53300
     * "too many connections", everything reconnecting after an outage), with doubling pauses up to
     * {@code spring.flyway.connect-retries-interval} seconds until {@code deadline} ({@code adapter.migration.database-wait}
     * from the start; counted in time, not tries: a try against an address that drops packets takes its connect
     * timeout): a pod started during a database outage (evicted, restarted, a failover) waits inside its startup
     * probe's window. A single try made the JVM exit and the pod crash-loop, out for minutes of kubelet's back-off
     * after the database was back. Any other failure (a wrong password, a missing database), or the deadline, ends
     * the start as before. So does a SIGTERM meanwhile (a rollout or a scale-down during the outage, Ctrl-C on the
     * local run): the wait is left at once. Spring's own shutdown hook waits for the start to end and interrupts
     * only a thread parked without a timeout, so a pod told to stop stayed up for the rest of the wait (10 minutes)
     * until the kubelet killed it at the end of its grace period.
     */
    static java.util.Set<String> awaitRecordsRead(org.flywaydb.core.api.configuration.Configuration configuration, long deadline) {
        Thread waiting = Thread.currentThread();
        java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
        Thread stop = new Thread(() -> {
            stopping.set(true);
            waiting.interrupt();
        }, "database-wait-stop");
        Runtime.getRuntime().addShutdownHook(stop); // throws while the JVM is already shutting down: no start then
        try {
            return awaitRecordsRead(configuration, deadline, stopping);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook ran or runs: the start ends anyway
            }
        }
    }

    private static java.util.Set<String> awaitRecordsRead(org.flywaydb.core.api.configuration.Configuration configuration, long deadline,
                                         java.util.concurrent.atomic.AtomicBoolean stopping) {
        long pauseSeconds = 1;
        for (int tried = 1; ; tried++) {
            if (stopping.get()) {
                throw new IllegalStateException("the service is stopping: no longer waiting for the database");
            }
            try {
                java.util.Set<String> ranEarlierTexts = EarlierReleasedTexts.ranEarlierTexts(configuration, historyTable(configuration));
                if (tried > 1) {
                    org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).info("The database answers (after {} tries)", tried);
                }
                return ranEarlierTexts;
            } catch (IllegalStateException e) {
                long left = deadline - System.nanoTime();
                if (!(e.getCause() instanceof java.sql.SQLException sql) || !waitable(sql) || left <= 0) {
                    throw e;
                }
                long pause = Math.min(pauseSeconds, java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(left) + 1);
                org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).warn(
                        "The database cannot be reached to migrate ({}): try {} in {} s, {} s left (adapter.migration.database-wait)",
                        LoggedFailure.describe(sql), tried + 1, pause, java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(left));
                if (stopping.get()) {
                    throw new IllegalStateException("the service is stopping: no longer waiting for the database", e);
                }
                pause(pause);
                pauseSeconds = Math.min(pauseSeconds * 2, Math.max(1, configuration.getConnectRetriesInterval()));
            }
        }
    }

    /**
     * Refuses a server the migrations cannot run on, naming it: one older than 12 (MATERIALIZED CTEs), or one without
     * gen_random_uuid() (built in from 13, pgcrypto's on 12), which V25 calls. On 12 without pgcrypto, V25 failed
     * ("function gen_random_uuid() does not exist"), was rolled back, and every new pod crash-looped on it.
     */
    static void requireSupportedServer(int major, String version, boolean hasGenRandomUuid) {
        if (major < 12 || !hasGenRandomUuid) {
            throw new IllegalStateException("PostgreSQL 13 or later is required (12 with the pgcrypto extension); this server is "
                    + version + (major >= 12 ? " without gen_random_uuid()" : "") + " (docs/deploying.md)");
        }
    }

    /**
     * A database that cannot be reached now (class 08), is shutting down, restarting or starting up (57P01-57P03: a
     * connection cut by a switchover or a crash), or has no connection left (53300).
     */
    static boolean waitable(java.sql.SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return state.startsWith("08") || state.startsWith("57P") || "53300".equals(state);
    }

    private static void pause(long seconds) {
        try {
            Thread.sleep(seconds * 1000);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("the service is stopping: no longer waiting for the database", interrupted);
        }
    }

    /**
     * Seconds of Flyway's own pauses for {@code retries} tries, doubling from 1 s up to {@code intervalSeconds}: what its
     * connection adds to the start's database wait (ManifestConsistencyTest), and the wait of a migration run outside
     * the service ({@link #migrate(org.flywaydb.core.Flyway)}).
     */
    public static long flywayPauseSeconds(int retries, int intervalSeconds) {
        long total = 0;
        for (long i = 0, pause = 1; i < retries; i++, pause = Math.min(pause * 2, Math.max(1, intervalSeconds))) {
            total += pause;
        }
        return total;
    }

    /** Whether a migration's script config says it runs outside a transaction (classpath locations). */
    static boolean outsideTransaction(org.flywaydb.core.api.configuration.Configuration configuration, String script) {
        for (org.flywaydb.core.api.Location location : configuration.getLocations()) {
            if (!location.isClassPath()) {
                continue;
            }
            try (java.io.InputStream in = configuration.getClassLoader()
                    .getResourceAsStream(location.getRootPath() + "/" + script + ".conf")) {
                if (in != null) {
                    String conf = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                    return conf.lines().map(String::strip).anyMatch("executeInTransaction=false"::equals);
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return false;
    }

    /** Flyway's history table, quoted (in the schema Flyway uses when one is configured). */
    static String historyTable(org.flywaydb.core.api.configuration.Configuration configuration) {
        String schema = configuration.getDefaultSchema() != null ? configuration.getDefaultSchema()
                : configuration.getSchemas().length > 0 ? configuration.getSchemas()[0] : null;
        return (schema == null ? "" : quoted(schema) + ".") + quoted(configuration.getTable());
    }

    private static void forgetFailed(org.flywaydb.core.api.configuration.Configuration configuration, String version) {
        String table = historyTable(configuration);
        try (java.sql.Connection connection = configuration.getDataSource().getConnection();
             java.sql.PreparedStatement delete = connection.prepareStatement(
                     "DELETE FROM " + table + " WHERE NOT success AND version = ?")) {
            connection.setAutoCommit(true);
            delete.setString(1, version);
            delete.executeUpdate();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("could not remove the record of failed migration " + version + ": "
                    + LoggedFailure.describe(e), e);
        }
    }

    private static String quoted(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
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
        SimpleDriverDataSource flyway = new ClientCheckingDataSource(new org.postgresql.Driver(),
                MainPoolStatementBound.liftFromUrl(url, properties), username, password);
        properties.setProperty("socketTimeout", "0");
        // a login is bounded although statements are not (pgjdbc's loginTimeout defaults to none): a server that takes
        // the connection and never answers fails the try, and the start tries again (awaitRecordsRead)
        properties.putIfAbsent("connectTimeout", "5");
        properties.putIfAbsent("loginTimeout", "10");
        properties.setProperty("tcpKeepAlive", "true");
        properties.setProperty("logServerErrorDetail", "false");
        properties.setProperty("ApplicationName", "survey-inbox-adapter migration");
        String options = properties.getProperty("options", "").strip();
        // the server's keepalive probes too: a migrating pod whose node dies would otherwise hold Flyway's session lock
        // (and V12's loop) on the server until the OS's keepalive (2 h), every new pod waiting for it in vain
        // and no idle-in-transaction bound (the main pool's options it copies carry one): a migration's own pauses are its own
        properties.setProperty("options", (options + " -c lock_timeout=" + lockTimeout.toMillis() + " -c statement_timeout=0"
                + " -c idle_in_transaction_session_timeout=0 " + MainPoolStatementBound.SERVER_KEEPALIVES).strip());
        flyway.setConnectionProperties(properties);
        return configuration.dataSource(flyway).callbacks(new DropInvalidIndexes()).javaMigrations(new EarlierReleasedTexts())
                .configuration(java.util.Map.of("flyway.postgresql.transactional.lock", "false"));
    }

    /**
     * Flyway's connections, each asking the server to notice a client gone while a statement runs
     * ({@code client_connection_check_interval}, PostgreSQL 14+, where the platform has it; ignored elsewhere): a
     * pod killed while its index build waited for older transactions left that build running on the server, holding
     * Flyway's session lock (keepalives end only an idle session), and every next pod waited for the lock in vain
     * until the old transactions ended.
     */
    static final class ClientCheckingDataSource extends SimpleDriverDataSource {

        static final String CHECK_CLIENT = """
                DO $$
                BEGIN
                    IF current_setting('server_version_num')::int >= 140000 THEN
                        PERFORM set_config('client_connection_check_interval', '5s', false);
                    END IF;
                EXCEPTION WHEN OTHERS THEN
                    NULL; -- a platform without it: as before
                END
                $$""";

        ClientCheckingDataSource(java.sql.Driver driver, String url, String username, String password) {
            super(driver, url, username, password);
        }

        @Override
        protected java.sql.Connection getConnectionFromDriver(Properties props) throws java.sql.SQLException {
            java.sql.Connection connection = super.getConnectionFromDriver(props);
            try (java.sql.Statement statement = connection.createStatement()) {
                statement.execute(CHECK_CLIENT);
            } catch (java.sql.SQLException e) {
                connection.close();
                throw e;
            }
            return connection;
        }
    }

    /**
     * A {@code CREATE INDEX CONCURRENTLY} cut short (the pod stopped mid-build) leaves an INVALID index that
     * {@code IF NOT EXISTS} would then skip for ever: such indexes are dropped (concurrently) right before each
     * migration, under Flyway's lock, except one still being built (none while another role builds an index: its
     * progress hides which). Dropped once before migrating
     * (outside the lock, with Flyway's 5 s lock_timeout), it failed every start, the serving release's restarts
     * included, while a long transaction (a pg_dump) held the table; and a pod that passed that step while another
     * pod's build was still running recorded the migration as done over the invalid index the killed build left
     * (FailedIndexBuildTest). The drop waits for older transactions as the build after it would (no lock_timeout). After
     * migrating, an invalid index nothing here rebuilds is named at WARN.
     */
    static final class DropInvalidIndexes implements org.flywaydb.core.api.callback.Callback {

        private static final String INVALID = """
                SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
                  FROM pg_index i
                  JOIN pg_class c ON c.oid = i.indexrelid
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE NOT i.indisvalid
                   AND n.nspname = current_schema()
                   -- NOT IN would match nothing while another role's build runs (its index_relid reads NULL)
                   AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = i.indexrelid)
                """;

        @Override
        public boolean supports(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            return event == org.flywaydb.core.api.callback.Event.BEFORE_EACH_MIGRATE
                    || event == org.flywaydb.core.api.callback.Event.AFTER_MIGRATE;
        }

        @Override
        public boolean canHandleInTransaction(org.flywaydb.core.api.callback.Event event,
                                              org.flywaydb.core.api.callback.Context context) {
            return false;
        }

        @Override
        public void handle(org.flywaydb.core.api.callback.Event event, org.flywaydb.core.api.callback.Context context) {
            org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FlywayConnection.class);
            try (java.sql.Connection connection = context.getConfiguration().getDataSource().getConnection();
                 java.sql.Statement statement = connection.createStatement()) {
                connection.setAutoCommit(true);
                java.util.List<String> invalid = new java.util.ArrayList<>();
                try (java.sql.ResultSet rs = statement.executeQuery(INVALID)) {
                    while (rs.next()) {
                        invalid.add(rs.getString(1));
                    }
                }
                if (event == org.flywaydb.core.api.callback.Event.AFTER_MIGRATE) {
                    warnLeft(invalid);
                    return;
                }
                if (!invalid.isEmpty()) {
                    // a build by another role reads index_relid NULL: it cannot be told from an abandoned one, so none
                    // is dropped (the migration's IF NOT EXISTS may then skip it; AFTER_MIGRATE names what is left)
                    try (java.sql.ResultSet rs = statement.executeQuery("SELECT count(*) FROM pg_stat_progress_create_index p"
                            + " JOIN pg_database d ON d.oid = p.datid WHERE d.datname = current_database() AND p.index_relid IS NULL")) {
                        rs.next();
                        if (rs.getLong(1) > 0) {
                            log.warn("Invalid indexes {} left: another role builds an index meanwhile, which may be one of them", invalid);
                            return;
                        }
                    }
                    statement.execute("SET lock_timeout = 0");
                }
                for (String index : invalid) {
                    log.warn("Dropping invalid index {} (a build cut short) before migration {}", index,
                            context.getMigrationInfo() == null ? "?" : context.getMigrationInfo().getScript());
                    statement.execute("DROP INDEX CONCURRENTLY IF EXISTS " + index);
                }
            } catch (java.sql.SQLException e) {
                if (event == org.flywaydb.core.api.callback.Event.AFTER_MIGRATE) {
                    log.warn("Invalid indexes not looked for after migrating: {}", LoggedFailure.describe(e));
                    return;
                }
                throw new IllegalStateException("could not drop invalid indexes before migrating: " + LoggedFailure.describe(e), e);
            }
        }

        @Override
        public String getCallbackName() {
            return "drop-invalid-indexes";
        }

        static void warnLeft(java.util.List<String> invalid) {
            for (String index : invalid) {
                org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).warn("Invalid index {} (a build cut short) and no "
                        + "migration left to build it: drop it (DROP INDEX CONCURRENTLY) and build it again with the statement of "
                        + "the migration that names it", index);
            }
        }
    }

    /**
     * After a start with nothing to migrate: the invalid indexes a cut build left, named at WARN as after a migrate. Not
     * while any index is being built in this database: another pod's migration may be building or dropping the one
     * named (another role's build cannot be told apart), and the advice to drop and rebuild it would be wrong.
     */
    static void warnInvalidIndexesLeft(javax.sql.DataSource dataSource) {
        java.util.List<String> invalid = new java.util.ArrayList<>();
        try (java.sql.Connection connection = dataSource.getConnection(); java.sql.Statement statement = connection.createStatement()) {
            try (java.sql.ResultSet rs = statement.executeQuery("SELECT count(*) FROM pg_stat_progress_create_index p"
                    + " JOIN pg_database d ON d.oid = p.datid WHERE d.datname = current_database()")) {
                if (rs.next() && rs.getLong(1) > 0) {
                    return;
                }
            }
            try (java.sql.ResultSet rs = statement.executeQuery(DropInvalidIndexes.INVALID)) {
                while (rs.next()) {
                    invalid.add(rs.getString(1));
                }
            }
        } catch (java.sql.SQLException e) {
            org.slf4j.LoggerFactory.getLogger(FlywayConnection.class).warn("Invalid indexes not looked for: {}", LoggedFailure.describe(e));
            return;
        }
        DropInvalidIndexes.warnLeft(invalid);
    }
}
