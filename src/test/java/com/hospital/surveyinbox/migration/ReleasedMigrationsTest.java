package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A migration, once released, is never edited: a database that ran it keeps its checksum in
 * {@code flyway_schema_history}, and Flyway's validation at start refuses a changed text ("Migration checksum
 * mismatch"): every new pod of the rollout crash-loops, and so does a rollback to an image whose text differs
 * (a rewritten migration's effect would not reach that database either). Each migration file (and its {@code .conf})
 * is pinned in {@code src/test/resources/db/released-migrations.sha256} (the output of {@code sha256sum}); a change
 * goes into a new migration. A new migration is pinned when it is added, by appending its line only (re-pinning every
 * file would silently accept an edited one), from an LF checkout:
 * {@code (cd src/main/resources/db/migration && sha256sum V18__….sql) >> src/test/resources/db/released-migrations.sha256}.
 */
class ReleasedMigrationsTest {

    private static final Path MIGRATIONS = Path.of("src/main/resources/db/migration");
    private static final Path PINNED = Path.of("src/test/resources/db/released-migrations.sha256");

    @Test
    void aReleasedMigrationIsNeverEdited() throws IOException {
        Map<String, String> pinned = pinned();
        Map<String, String> present = present();
        assertThat(pinned).as("pinned migrations (released-migrations.sha256)").isNotEmpty();
        pinned.forEach((file, hash) -> assertThat(present.get(file))
                .as("%s: a released migration is never edited or removed; put the change in a new migration", file)
                .isEqualTo(hash));
        assertThat(pinned.keySet())
                .as("every migration is pinned once added (see this class's Javadoc for the command)")
                .containsAll(present.keySet());
    }

    /** The inbox or its attempts (every claim inserts one in the claim's statement), however a statement names it. */
    private static final String HOT_TABLE = "\\s+(?:\"?public\"?\\s*\\.\\s*)?\"?(?:inbox_message|inbox_attempt)\"?(?!\\w)";

    /**
     * A statement that locks a hot table against writes for a moment, however it is spelt: an ALTER (ONLY, IF EXISTS,
     * a schema, any case), a trigger created on it, a LOCK, a foreign key to it. The guard matched "ALTER TABLE
     * inbox_message" alone, case and spacing as written.
     */
    static final java.util.regex.Pattern LOCKS_A_HOT_TABLE = java.util.regex.Pattern.compile(
            "\\b(?:ALTER\\s+TABLE(?:\\s+IF\\s+EXISTS)?(?:\\s+ONLY)?|LOCK(?:\\s+TABLE)?(?:\\s+ONLY)?|REFERENCES"
                    + "|CREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:CONSTRAINT\\s+)?TRIGGER\\s+\\w+\\s+(?:BEFORE|AFTER|INSTEAD\\s+OF)\\s+[\\w\\s,]+?\\s+ON)"
                    + HOT_TABLE, java.util.regex.Pattern.CASE_INSENSITIVE);

    /**
     * A statement that blocks a hot table's writes for as long as it runs (minutes at millions of rows): an index
     * built without CONCURRENTLY, TRUNCATE, CLUSTER, VACUUM FULL, a REINDEX TABLE without CONCURRENTLY. Never from V12.
     */
    static final java.util.regex.Pattern BLOCKS_A_HOT_TABLE = java.util.regex.Pattern.compile(
            "\\b(?:CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(?!CONCURRENTLY)(?:IF\\s+NOT\\s+EXISTS\\s+)?(?:\\w+\\s+)?ON(?:\\s+ONLY)?"
                    + "|TRUNCATE(?:\\s+TABLE)?(?:\\s+ONLY)?|CLUSTER|VACUUM\\s*\\(?\\s*FULL\\s*\\)?"
                    + "|REINDEX\\s+(?:\\(\\s*\\w+\\s*\\)\\s*)?TABLE(?!\\s+CONCURRENTLY))" + HOT_TABLE,
            java.util.regex.Pattern.CASE_INSENSITIVE);

    @Test
    void theHotTableGuardFindsEverySpellingOfALock() {
        for (String locking : java.util.List.of("ALTER TABLE inbox_message ADD COLUMN x INT", "alter table inbox_message add x int",
                "ALTER TABLE ONLY public.inbox_message ADD x INT", "ALTER TABLE IF EXISTS \"inbox_attempt\" ADD x INT",
                "ALTER\n  TABLE inbox_attempt ADD x INT", "LOCK TABLE inbox_message IN ACCESS EXCLUSIVE MODE",
                "CREATE TRIGGER t BEFORE INSERT OR UPDATE ON inbox_attempt FOR EACH ROW EXECUTE FUNCTION f()",
                "create or replace trigger t after delete on public.inbox_message for each row execute function f()",
                "CREATE TABLE x (id BIGINT REFERENCES inbox_message (id))")) {
            assertThat(LOCKS_A_HOT_TABLE.matcher(locking).find()).as(locking).isTrue();
        }
        for (String blocking : java.util.List.of("CREATE INDEX i ON inbox_message (status)", "create unique index on inbox_attempt (id)",
                "CREATE INDEX IF NOT EXISTS i ON ONLY public.inbox_message (id)", "TRUNCATE inbox_attempt", "CLUSTER inbox_message",
                "VACUUM FULL inbox_message", "VACUUM (FULL) inbox_attempt", "REINDEX TABLE inbox_message")) {
            assertThat(BLOCKS_A_HOT_TABLE.matcher(blocking).find()).as(blocking).isTrue();
        }
        for (String concurrent : java.util.List.of("CREATE INDEX CONCURRENTLY IF NOT EXISTS i ON inbox_message (id)",
                "REINDEX TABLE CONCURRENTLY inbox_message", "CREATE INDEX i ON inbox_message_archive (id)")) {
            assertThat(BLOCKS_A_HOT_TABLE.matcher(concurrent).find()).as(concurrent).isFalse();
        }
        for (String other : java.util.List.of("ALTER TABLE synchronous_lease ADD x INT", "ALTER TABLE inbox_message_archive ADD x INT",
                "CREATE INDEX CONCURRENTLY i ON inbox_message (id)", "SELECT * FROM inbox_message")) {
            assertThat(LOCKS_A_HOT_TABLE.matcher(other).find()).as(other).isFalse();
        }
    }

    /**
     * From V12 on (a table of millions of rows, every reception writing to it), a migration altering the inbox table
     * takes its lock in bounded tries (lock_timeout 50 ms for an exclusive one, a pause, again): a plain ALTER waited
     * up to Flyway's 5 s lock_timeout with every reception queued behind it (503s), and failed the start behind any
     * longer transaction (V23's first text). And none holds it for a whole build or rewrite.
     */
    @Test
    void aLaterMigrationAltersTheInboxTableInShortTries() throws IOException {
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("V\\d+__.*\\.sql")).toList()) {
                int version = Integer.parseInt(file.getFileName().toString().replaceFirst("^V(\\d+)__.*", "$1"));
                String sql = Files.readString(file, StandardCharsets.UTF_8);
                if (version >= 12) {
                    assertThat(BLOCKS_A_HOT_TABLE.matcher(sql).find()).as(file.getFileName() + ": a statement that blocks a hot"
                            + " table's writes while it runs (build indexes CONCURRENTLY)").isFalse();
                }
                if (version >= 12 && LOCKS_A_HOT_TABLE.matcher(sql).find()) {
                    assertThat(sql).as(file.getFileName() + ": the ALTER in short tries, as V18")
                            .contains("FOR try IN").contains("'lock_timeout', '").contains("WHEN lock_not_available");
                }
            }
        }
    }

    private static Map<String, String> pinned() throws IOException {
        Map<String, String> pinned = new TreeMap<>();
        for (String line : Files.readAllLines(PINNED, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                String[] parts = line.strip().split("\\s+\\*?", 2);
                pinned.put(parts[1], parts[0]);
            }
        }
        return pinned;
    }

    private static Map<String, String> present() throws IOException {
        Map<String, String> present = new TreeMap<>();
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            for (Path file : files.toList()) {
                // line endings as Flyway's checksum reads them (a CRLF checkout is the same migration)
                String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).replace("\r\n", "\n");
                present.put(file.getFileName().toString(), sha256(text.getBytes(StandardCharsets.UTF_8)));
            }
        }
        return present;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
