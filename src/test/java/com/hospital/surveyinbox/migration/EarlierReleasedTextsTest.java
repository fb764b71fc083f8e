package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.EarlierReleasedTexts;
import com.hospital.surveyinbox.config.FlywayConnection;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.junit.jupiter.api.Test;

/**
 * A database that ran earlier texts of migrations edited after a commit that carried them (kept in
 * {@code src/test/resources/db/earlier-migrations/<commit>/}) starts as the service starts it — Flyway's validation
 * refused it before ("Migration checksum mismatch", every new pod crash-looping) — and ends with what the current
 * texts build: the same indexes, counts function and table options as a database migrated with the current texts.
 */
class EarlierReleasedTextsTest {

    private static final Path EARLIER = Path.of("src/test/resources/db/earlier-migrations");

    @Test
    void everyEarlierTextIsInTheLedgerAndTheChecksumIsFlywaysOwn() throws Exception {
        Map<String, Set<Integer>> ledger = EarlierReleasedTexts.EARLIER;
        List<String> texts = new ArrayList<>();
        for (Path text : earlierTexts()) {
            String version = version(text);
            try (InputStream in = Files.newInputStream(text)) {
                assertThat(ledger.get(version)).as(text + " in the ledger").contains(EarlierReleasedTexts.checksum(in));
            }
            texts.add(version + ":" + text.getParent().getFileName());
        }
        assertThat(texts).as("one kept text per checksum in the ledger")
                .hasSize(ledger.values().stream().mapToInt(Set::size).sum());

        // the checksum as Flyway itself records it, for every current text
        EmbeddedServices services = EmbeddedServices.get();
        String database = "earlier_checksums_" + System.nanoTime();
        String url = services.migratedDatabase(database);
        try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT script, checksum FROM flyway_schema_history WHERE checksum IS NOT NULL")) {
            int compared = 0;
            while (rs.next()) {
                try (InputStream in = Files.newInputStream(Path.of("src/main/resources/db/migration", rs.getString(1)))) {
                    assertThat(EarlierReleasedTexts.checksum(in)).as(rs.getString(1)).isEqualTo(rs.getInt(2));
                }
                compared++;
            }
            assertThat(compared).isGreaterThanOrEqualTo(18);
        } finally {
            services.dropDatabase(database);
        }
    }

    @Test
    void aDatabaseThatRanTheEarliestTextsStartsAndEndsAsTheCurrentTextsLeaveIt() throws Exception {
        EmbeddedServices services = EmbeddedServices.get();
        String earlier = "earlier_texts_" + System.nanoTime();
        String current = "current_texts_" + System.nanoTime();
        Path folder = Files.createTempDirectory("earlier-migrations");
        try {
            // the current texts, each edited one replaced by its earliest released text
            copyCurrentTexts(folder);
            Map<String, Path> earliest = new TreeMap<>();
            for (Path text : earlierTexts()) {
                earliest.merge(text.getFileName().toString(), text, (a, b) -> releaseOrder(a) <= releaseOrder(b) ? a : b);
            }
            for (Path text : earliest.values()) {
                Files.copy(text, folder.resolve(text.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            String earlierUrl = services.createDatabase(earlier);
            flyway(earlierUrl).locations("filesystem:" + folder).target("18").load().migrate();
            List<String> historyBefore;
            try (Connection c = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement()) {
                assertThat(schema(s).get("options")).as("what the earlier V13 left").contains("autovacuum_vacuum_threshold=20000");
                historyBefore = history(s);
            }

            // started as the service starts (Boot's migration strategy)
            FlywayConnection.migrate(flyway(earlierUrl).locations("classpath:db/migration").load());

            String currentUrl = services.migratedDatabase(current);
            try (Connection e = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, "");
                 Connection c = DriverManager.getConnection(currentUrl, EmbeddedServices.DB_USER, "");
                 Statement es = e.createStatement(); Statement cs = c.createStatement()) {
                assertThat(schema(es)).isEqualTo(schema(cs));
                assertThat(versions(history(es))).as("the current texts' migrations, 19 applied").isEqualTo(versions(history(cs)));
                // each record kept as it ran: a record rewritten to the current text's made an old pod (the image that
                // carries the earlier text) crash-loop on its next start during the rollout
                assertThat(history(es).subList(0, historyBefore.size())).as("the earlier texts' records kept").isEqualTo(historyBefore);
                // the stats read as the service runs it: read-only (the earlier V8's function wrote)
                es.execute("BEGIN READ ONLY");
                es.executeQuery("SELECT status, total FROM inbox_status_counts()").close();
                es.execute("COMMIT");
            }
            List<String> started;
            try (Connection e = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, ""); Statement es = e.createStatement()) {
                started = history(es);
            }
            // and a second start changes nothing
            FlywayConnection.migrate(flyway(earlierUrl).locations("classpath:db/migration").load());
            try (Connection e = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, ""); Statement es = e.createStatement()) {
                assertThat(history(es)).isEqualTo(started);
            }
            // the old image (V1-V18, the earlier texts) still validates: its pods restart during the rollout, or after a rollback
            Flyway.configure().dataSource(earlierUrl, EmbeddedServices.DB_USER, "").locations("filesystem:" + upTo(folder, 18))
                    .load().validate();
        } finally {
            drop(services, folder, earlier, current);
        }
    }

    /**
     * V23's first text (7d2d10c, edited after: its ALTER now takes the lock in short tries), applied on a database after
     * the current texts of V1-V22: the service starts on it (the record's earlier checksum taken as valid, and kept: the image
     * that carried it still starts) and the migrations end as the current texts leave them.
     */
    @Test
    void aDatabaseThatRanV23sFirstTextStarts() throws Exception {
        EmbeddedServices services = EmbeddedServices.get();
        String earlier = "earlier_v23_" + System.nanoTime();
        String current = "current_v23_" + System.nanoTime();
        Path folder = Files.createTempDirectory("earlier-v23");
        try {
            copyCurrentTexts(folder);
            Files.copy(EARLIER.resolve("7d2d10c/V23__pending_since.sql"), folder.resolve("V23__pending_since.sql"),
                    StandardCopyOption.REPLACE_EXISTING);
            String earlierUrl = services.createDatabase(earlier);
            flyway(earlierUrl).locations("filesystem:" + folder).target("23").load().migrate();

            FlywayConnection.migrate(flyway(earlierUrl).locations("classpath:db/migration").load());

            String currentUrl = services.migratedDatabase(current);
            try (Connection e = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, "");
                 Connection c = DriverManager.getConnection(currentUrl, EmbeddedServices.DB_USER, "");
                 Statement es = e.createStatement(); Statement cs = c.createStatement()) {
                assertThat(schema(es)).isEqualTo(schema(cs));
                assertThat(versions(history(es))).isEqualTo(versions(history(cs)));
                assertThat(history(es)).as("V23's record kept as it ran").contains("23 " + EarlierReleasedTexts.EARLIER.get("23").iterator().next() + " true");
            }
            // the image that carried that text still starts (validates) on it: its pods restart during the rollout
            flyway(earlierUrl).locations("filesystem:" + upTo(folder, 23)).load().validate();

            // any other mismatch beside it is refused as before, by Flyway's own validation
            try (Connection e = DriverManager.getConnection(earlierUrl, EmbeddedServices.DB_USER, ""); Statement es = e.createStatement()) {
                es.execute("UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '9'");
            }
            org.assertj.core.api.Assertions.assertThatThrownBy(() ->
                            FlywayConnection.migrate(flyway(earlierUrl).locations("classpath:db/migration").load()))
                    .isInstanceOf(org.flywaydb.core.api.exception.FlywayValidateException.class)
                    .hasMessageContaining("checksum mismatch for migration version 9");
        } finally {
            drop(services, folder, earlier, current);
        }
    }

    /**
     * Migration 19 runs outside a transaction: one that failed (an index build cancelled, the disk full) is recorded
     * failed, and Flyway refused every later start ("Detected failed migration to version 19") until a repair by hand;
     * its record is removed and it runs again, as for the index migrations.
     */
    @Test
    void aFailedMigration19RunsAgainAtTheNextStart() throws Exception {
        EmbeddedServices services = EmbeddedServices.get();
        String database = "failed_v19_" + System.nanoTime();
        String url = services.migratedDatabase(database);
        try {
            try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement()) {
                s.execute("UPDATE flyway_schema_history SET success = false WHERE version = '19'");
                s.execute("DELETE FROM flyway_schema_history WHERE installed_rank > (SELECT installed_rank FROM flyway_schema_history "
                        + "WHERE version = '19')");
            }

            FlywayConnection.migrate(flyway(url).locations("classpath:db/migration").load());

            try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT bool_and(success), count(*) FROM flyway_schema_history WHERE version IS NOT NULL AND CAST(version AS int) >= 19")) {
                rs.next();
                assertThat(rs.getBoolean(1)).isTrue();
                assertThat(rs.getInt(2)).isGreaterThanOrEqualTo(2); // 19 again, and what follows it
            }
        } finally {
            services.dropDatabaseIfExists(database);
        }
    }

    /** Indexes, functions' source, the inbox table's options: what the migrations leave. */
    private static Map<String, String> schema(Statement s) throws Exception {
        Map<String, String> schema = new TreeMap<>();
        try (ResultSet rs = s.executeQuery("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()")) {
            while (rs.next()) {
                schema.put("index " + rs.getString(1), rs.getString(2));
            }
        }
        try (ResultSet rs = s.executeQuery("SELECT p.proname, l.lanname || ' ' || p.provolatile::text || ' ' || p.prosrc FROM pg_proc p "
                + "JOIN pg_language l ON l.oid = p.prolang WHERE p.pronamespace = current_schema()::regnamespace")) {
            while (rs.next()) {
                schema.put("function " + rs.getString(1), rs.getString(2).replaceAll("\\s+", " ").strip());
            }
        }
        try (ResultSet rs = s.executeQuery("SELECT array_to_string(ARRAY(SELECT o FROM unnest(reloptions) o ORDER BY o), ',') "
                + "FROM pg_class WHERE oid = 'inbox_message'::regclass")) {
            rs.next();
            schema.put("options", rs.getString(1));
        }
        return schema;
    }

    private static List<String> history(Statement s) throws Exception {
        List<String> history = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("SELECT version, checksum, success FROM flyway_schema_history WHERE version IS NOT NULL "
                + "ORDER BY installed_rank")) {
            while (rs.next()) {
                history.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getBoolean(3));
            }
        }
        return history;
    }

    private static List<Path> earlierTexts() throws IOException {
        try (Stream<Path> files = Files.walk(EARLIER)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".sql")).sorted().toList();
        }
    }

    private static String version(Path text) {
        return text.getFileName().toString().replaceFirst("^V(\\d+)__.*", "$1");
    }

    /** Which of a version's kept texts was released first: V5's two, in order (the others have one). */
    private static int releaseOrder(Path text) {
        return List.of("c9e4bd6", "d97f0ac").indexOf(text.getParent().getFileName().toString());
    }

    /** The versions of a history (without their checksums). */
    private static List<String> versions(List<String> history) {
        return history.stream().map(line -> line.substring(0, line.indexOf(' ')) + line.substring(line.lastIndexOf(' '))).toList();
    }

    /** An older image's migrations: the texts of {@code folder} up to {@code version}, in a folder of their own. */
    private static Path upTo(Path folder, int version) throws IOException {
        Path older = Files.createDirectory(folder.resolve("up-to-" + version));
        try (Stream<Path> files = Files.list(folder)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("V\\d+__.*\\.sql")).toList()) {
                if (Integer.parseInt(version(file)) <= version) {
                    Files.copy(file, older.resolve(file.getFileName()));
                }
            }
        }
        return older;
    }

    private static void copyCurrentTexts(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/db/migration"))) {
            for (Path file : files.toList()) {
                Files.copy(file, folder.resolve(file.getFileName()));
            }
        }
    }

    private static void drop(EmbeddedServices services, Path folder, String... databases) throws IOException {
        for (String database : databases) {
            services.dropDatabaseIfExists(database);
        }
        try (Stream<Path> files = Files.walk(folder)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static FluentConfiguration flyway(String url) {
        return FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "", java.time.Duration.ofSeconds(5),
                new java.util.Properties());
    }
}
