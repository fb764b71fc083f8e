package com.hospital.surveyinbox.config;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.Configuration;
import org.flywaydb.core.api.migration.Context;
import org.flywaydb.core.api.migration.JavaMigration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Migrations whose text was edited after a commit that carried them (V5, V7, V8, V11–V17, before the texts were
 * pinned by {@code ReleasedMigrationsTest}, V17 once after, and V23 once after: its first text waited for the table's
 * lock up to Flyway's 5 s lock_timeout with every reception queued behind it). The service is rolled on every change, so a database
 * may have run an earlier text: its {@code flyway_schema_history} keeps that text's checksum, and Flyway's validation
 * refused every later start ("Migration checksum mismatch"): each new pod crash-looped, the roll stopped, until
 * someone ran {@code flyway repair} by hand. And a repair alone would have left what some earlier texts built: the
 * finished-row indexes without their reply condition (V7), a counts function that writes (V8, failing the read-only
 * stats read), the attempts' index with a condition the chart's plan does not use (V11), vacuum by 20,000 dead rows
 * (V13).
 * <p>
 * Two parts. {@link #ranEarlierTexts} and {@link #migrate} (at every start) take a migration recorded with the checksum
 * of one of the earlier texts listed here, and only those, as valid, its record kept as it is (an old pod carrying
 * that text still starts during the rollout, and after a rollback): any other mismatch is refused as before. Then
 * this class, migration 19, brings what those earlier texts built to what the current texts build, looking before it
 * changes anything, so a database that ran the current texts is left as it is. The earlier texts are kept in
 * {@code src/test/resources/db/earlier-migrations/} ({@code EarlierReleasedTextsTest} migrates a database with them and
 * starts it as the service does).
 */
public final class EarlierReleasedTexts implements JavaMigration {

    private static final Logger LOG = LoggerFactory.getLogger(EarlierReleasedTexts.class);

    /** Version → the Flyway checksums of its earlier released texts (by the commit that carried each). */
    public static final Map<String, Set<Integer>> EARLIER = Map.ofEntries(
            Map.entry("5", Set.of(-1400317095 /* c9e4bd6 */, 1807114245 /* d97f0ac */)),
            Map.entry("7", Set.of(-1919092764 /* 81fbbbb */)),
            Map.entry("8", Set.of(688015492 /* 1604982 */)),
            Map.entry("11", Set.of(-1368941234 /* 1d89b3e */)),
            Map.entry("12", Set.of(1742045991 /* 3db6ef2 */)),
            Map.entry("13", Set.of(1677997331 /* 56d1c96 */)),
            Map.entry("14", Set.of(-47360784 /* 794b4e8 */)),
            Map.entry("15", Set.of(1019360890 /* 01af0dd */)),
            Map.entry("16", Set.of(1401829930 /* 6a0c3a1 */)),
            Map.entry("17", Set.of(-660403702 /* 1a7c23c */)),
            Map.entry("23", Set.of(-1438552314 /* 7d2d10c */)));

    @Override
    public MigrationVersion getVersion() {
        return MigrationVersion.fromVersion("19");
    }

    @Override
    public String getDescription() {
        return "earlier released texts";
    }

    @Override
    public Integer getChecksum() {
        return null;
    }

    @Override
    public boolean canExecuteInTransaction() {
        return false; // indexes are built CONCURRENTLY
    }

    @Override
    public void migrate(Context context) throws SQLException {
        Connection connection = context.getConnection();
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET lock_timeout = 0"); // as the index migrations: CONCURRENTLY waits, never blocks writers
            // V7 (81fbbbb): the finished rows' indexes without "AND reply_status IN ('NONE', 'SENT')", no requeueable index
            index(statement, "inbox_message_finished_other_idx", definition -> definition.contains("reply_status"),
                    "ON inbox_message (updated_at) WHERE (status = 'DEAD' OR (status = 'COMPLETED' AND msg_type = 'SUBMIT'))"
                            + " AND reply_status IN ('NONE', 'SENT')");
            index(statement, "inbox_message_finished_send_idx", definition -> definition.contains("reply_status"),
                    "ON inbox_message (updated_at) WHERE status = 'COMPLETED' AND msg_type = 'SEND' AND reply_status IN ('NONE', 'SENT')");
            index(statement, "inbox_message_requeueable_subject_idx", definition -> true,
                    "ON inbox_message (srvy_drawup_no) WHERE status = 'DEAD' AND redacted_at IS NULL");
            // V11 (1d89b3e): the attempts' covering index with "WHERE finished_at IS NOT NULL"
            index(statement, "inbox_attempt_finished_outcome_idx", definition -> !definition.contains(" WHERE "),
                    "ON inbox_attempt (finished_at) INCLUDE (outcome)");
            // V8 (1604982): a counts function that folded the deltas itself (a write, refused in the read-only stats read)
            if ("plpgsql".equals(single(statement, "SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
                    + "WHERE p.proname = 'inbox_status_counts' AND p.pronamespace = current_schema()::regnamespace"))) {
                LOG.warn("V19: inbox_status_counts() is the one an earlier V8 text created; replaced by the current one");
                statement.execute("""
                        CREATE OR REPLACE FUNCTION inbox_status_counts() RETURNS TABLE (status TEXT, total BIGINT) LANGUAGE sql STABLE AS $$
                            SELECT t.status, t.total + coalesce((SELECT sum(d.delta) FROM inbox_status_delta d WHERE d.status = t.status), 0)::bigint
                              FROM inbox_status_total t
                            UNION ALL
                            SELECT m.status, count(*) FROM inbox_message m WHERE m.status IN ('RECEIVED', 'PROCESSING', 'FAILED') GROUP BY m.status
                        $$""");
            }
            // V13 (56d1c96): vacuum by 20,000 dead rows, not 100,000; the current text's bounded lock wait
            String options = single(statement, "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'inbox_message'::regclass");
            if (options != null && options.contains("autovacuum_vacuum_threshold=20000")) {
                LOG.warn("V19: inbox_message has the autovacuum threshold of an earlier V13 text; set to the current one");
                statement.execute("""
                        DO $$
                        BEGIN
                            FOR try IN 1..48 LOOP
                                BEGIN
                                    PERFORM set_config('lock_timeout', '2s', true);
                                    ALTER TABLE inbox_message SET (autovacuum_vacuum_threshold = 100000);
                                    PERFORM set_config('lock_timeout', '0', true);
                                    RETURN;
                                EXCEPTION WHEN lock_not_available THEN
                                    PERFORM pg_sleep(0.5);
                                END;
                            END LOOP;
                            RAISE WARNING 'inbox_message stayed locked by a VACUUM or ANALYZE for 2 minutes: its autovacuum threshold '
                                '(V19) was not set; run ALTER TABLE inbox_message SET (autovacuum_vacuum_threshold = 100000) once it has finished';
                        END $$""");
                // a Java migration's server warnings are not printed by Flyway, and migration 19 is recorded done
                for (java.sql.SQLWarning warning = statement.getWarnings(); warning != null; warning = warning.getNextWarning()) {
                    LOG.warn("V19: {}", warning.getMessage());
                }
            }
            statement.execute("RESET lock_timeout");
        }
    }

    /**
     * Leaves a valid index whose definition is {@code right} as it is; otherwise builds it under a name of its own
     * first and only then drops the old one and takes its name, so the sweeps that read it never go without an index
     * (a pod stopped between the steps leaves the new one built: the next run takes it up). An invalid index (a build
     * cut short) is never taken for a built one.
     */
    private static void index(Statement statement, String name, java.util.function.Predicate<String> right, String definition)
            throws SQLException {
        String present = definition(statement, name);
        if (present != null && valid(statement, name) && right.test(present)) {
            return;
        }
        String building = name + "_v19";
        boolean built = definition(statement, building) != null;
        if (built && !valid(statement, building)) {
            statement.execute("DROP INDEX CONCURRENTLY IF EXISTS " + building);
            built = false;
        }
        if (!built) {
            LOG.warn("V19: index {} is {}; built again as the current text builds it", name,
                    present == null ? "missing" : "the one an earlier text created (" + present + ")");
            statement.execute("CREATE INDEX CONCURRENTLY " + building + " " + definition);
        }
        if (present != null) {
            statement.execute("DROP INDEX CONCURRENTLY IF EXISTS " + name);
        }
        statement.execute("ALTER INDEX " + building + " RENAME TO " + name);
    }

    private static String definition(Statement statement, String index) throws SQLException {
        return single(statement, "SELECT pg_get_indexdef(to_regclass('" + index + "'))");
    }

    private static boolean valid(Statement statement, String index) throws SQLException {
        return "t".equals(single(statement, "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('" + index + "')"));
    }

    private static String single(Statement statement, String sql) throws SQLException {
        try (ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /**
     * Before Flyway validates: the versions recorded with the checksum of one of their earlier released texts (not the
     * current text's). Their records are kept as they are: rewritten to the current text's (as this class did first),
     * an old pod still running the image that carries the earlier text crash-looped on its next start during the
     * rollout (an OOM exit, a node drain, the HPA adding pods to the old ReplicaSet, a stalled rollout), and a rollback
     * to it needed the record set back by hand. {@link #migrate} takes them as valid instead.
     */
    static Set<String> ranEarlierTexts(Configuration configuration, String table) {
        try (Connection connection = configuration.getDataSource().getConnection()) {
            connection.setAutoCommit(true);
            // the start's first connection: a server too old is named here, not by a migration failing half-way
            try (PreparedStatement uuid = connection.prepareStatement("SELECT to_regprocedure('gen_random_uuid()') IS NOT NULL");
                 ResultSet rs = uuid.executeQuery()) {
                FlywayConnection.requireSupportedServer(connection.getMetaData().getDatabaseMajorVersion(),
                        connection.getMetaData().getDatabaseProductVersion(), rs.next() && rs.getBoolean(1));
            }
            try (PreparedStatement exists = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
                exists.setString(1, table);
                try (ResultSet rs = exists.executeQuery()) {
                    if (!rs.next() || !rs.getBoolean(1)) {
                        return Set.of(); // a new database
                    }
                }
            }
            Set<String> earlier = new java.util.TreeSet<>();
            try (PreparedStatement recorded = connection.prepareStatement(
                         "SELECT version, script, checksum FROM " + table + " WHERE success AND checksum IS NOT NULL AND version IS NOT NULL");
                 ResultSet rs = recorded.executeQuery()) {
                while (rs.next()) {
                    String version = rs.getString(1);
                    int checksum = rs.getInt(3);
                    if (!EARLIER.getOrDefault(version, Set.of()).contains(checksum)) {
                        continue;
                    }
                    Integer current = currentChecksum(configuration, rs.getString(2));
                    if (current != null && current != checksum) {
                        earlier.add(version);
                        LOG.info("Migration {} ran as an earlier released text (checksum {}): taken as valid, its record kept; "
                                + "migration 19 brings what it built up to date", rs.getString(2), checksum);
                    }
                }
            }
            return earlier;
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the migration records before validating: " + LoggedFailure.describe(e), e);
        }
    }

    /**
     * Flyway's migrate, validating first as it does, except that a checksum mismatch of a version in
     * {@code ranEarlierTexts} ({@link #ranEarlierTexts}) is no refusal: the validation is Flyway's own (pending
     * migrations allowed, as its migrate allows them), then the migrate runs without validating again. Any other
     * mismatch, or a mismatch of another version, is refused by Flyway's migrate as before.
     */
    static void migrate(org.flywaydb.core.Flyway flyway, Set<String> ranEarlierTexts) {
        Configuration configuration = flyway.getConfiguration();
        if (ranEarlierTexts.isEmpty() || !configuration.isValidateOnMigrate()) {
            org.flywaydb.core.api.MigrationInfoService upToDate = upToDate(flyway);
            if (upToDate != null && (!configuration.isValidateOnMigrate() || flyway.validateWithResult().validationSuccessful)) {
                reportUpToDate(flyway, upToDate);
                return;
            }
            flyway.migrate();
            return;
        }
        java.util.List<org.flywaydb.core.api.pattern.ValidatePattern> ignored =
                new java.util.ArrayList<>(java.util.List.of(configuration.getIgnoreMigrationPatterns()));
        ignored.add(org.flywaydb.core.api.pattern.ValidatePattern.fromPattern("*:pending"));
        org.flywaydb.core.api.output.ValidateResult result = org.flywaydb.core.Flyway.configure(configuration.getClassLoader())
                .configuration(configuration)
                .ignoreMigrationPatterns(ignored.toArray(org.flywaydb.core.api.pattern.ValidatePattern[]::new))
                .load().validateWithResult();
        boolean onlyEarlierTexts = !result.invalidMigrations.isEmpty() && result.invalidMigrations.stream().allMatch(invalid ->
                invalid.errorDetails != null && invalid.errorDetails.errorCode == org.flywaydb.core.api.CoreErrorCode.CHECKSUM_MISMATCH
                        && ranEarlierTexts.contains(invalid.version));
        if (!result.validationSuccessful && !onlyEarlierTexts) {
            flyway.migrate(); // refused by Flyway's own validation, with its message
            return;
        }
        org.flywaydb.core.api.MigrationInfoService upToDate = upToDate(flyway);
        if (upToDate != null) {
            reportUpToDate(flyway, upToDate);
            return;
        }
        org.flywaydb.core.Flyway.configure(configuration.getClassLoader()).configuration(configuration).validateOnMigrate(false)
                .load().migrate();
    }

    /**
     * Nothing for this release to apply (validated by the caller): the start goes on without Flyway's migrate, which
     * waits for Flyway's lock even then. A pod of the serving release restarting (evicted, OOM-killed) or added by the
     * autoscaler to the old ReplicaSet during a rollout waited behind the new release's migration (an index built
     * concurrently on a big table, for as long as older transactions last), past spring.flyway.lock-retry-count, and
     * crash-looped: no capacity could be added until the build ended. Read without a lock (info), so a migration another
     * pod runs meanwhile is one this release does not know (future, ignored) or still pending here (then it waits, as
     * it must). A failed record (this release's, or a newer one's) still goes through migrate, as before. The records
     * as read (one read, for the report too), or null when there is something to migrate.
     */
    static org.flywaydb.core.api.MigrationInfoService upToDate(org.flywaydb.core.Flyway flyway) {
        org.flywaydb.core.api.MigrationInfoService info = flyway.info();
        return info.pending().length == 0 && java.util.Arrays.stream(info.all()).noneMatch(m -> m.getState().isFailed())
                ? info : null;
    }

    /**
     * What a migrate with nothing to apply said: the schema's version, newer than this image knows after a rollback
     * (Flyway's WARN), and the invalid indexes a cut build left (DropInvalidIndexes after migrating).
     */
    private static void reportUpToDate(org.flywaydb.core.Flyway flyway, org.flywaydb.core.api.MigrationInfoService info) {
        java.util.List<String> newer = java.util.Arrays.stream(info.all())
                .filter(m -> m.getState() == org.flywaydb.core.api.MigrationState.FUTURE_SUCCESS && m.getVersion() != null)
                .map(m -> m.getVersion().getVersion()).toList();
        if (!newer.isEmpty()) {
            LOG.warn("The schema has migrations newer than this release knows ({}): a newer release migrated it (a rollback?)", newer);
        }
        LOG.info("Schema up to date (version {}): nothing to migrate", info.current() == null ? "none" : info.current().getVersion());
        FlywayConnection.warnInvalidIndexesLeft(flyway.getConfiguration().getDataSource());
    }

    /** The checksum Flyway records for a migration script of a classpath location: CRC32 over its lines, BOM dropped. */
    static Integer currentChecksum(Configuration configuration, String script) {
        for (org.flywaydb.core.api.Location location : configuration.getLocations()) {
            if (!location.isClassPath()) {
                continue;
            }
            try (InputStream in = configuration.getClassLoader().getResourceAsStream(location.getRootPath() + "/" + script)) {
                if (in != null) {
                    return checksum(in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return null;
    }

    public static int checksum(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 4096);
        String line = reader.readLine();
        if (line != null && line.startsWith("\uFEFF")) {
            line = line.substring(1);
        }
        while (line != null) {
            crc.update(line.getBytes(StandardCharsets.UTF_8));
            line = reader.readLine();
        }
        return (int) crc.getValue();
    }
}
