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

    /**
     * From V12 on (a table of millions of rows, every reception writing to it), a migration altering the inbox table
     * takes its lock in bounded tries (lock_timeout 50 ms for an exclusive one, a pause, again): a plain ALTER waited
     * up to Flyway's 5 s lock_timeout with every reception queued behind it (503s), and failed the start behind any
     * longer transaction (V23's first text).
     */
    @Test
    void aLaterMigrationAltersTheInboxTableInShortTries() throws IOException {
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("V\\d+__.*\\.sql")).toList()) {
                int version = Integer.parseInt(file.getFileName().toString().replaceFirst("^V(\\d+)__.*", "$1"));
                String sql = Files.readString(file, StandardCharsets.UTF_8);
                if (version >= 12 && sql.contains("ALTER TABLE inbox_message")) {
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
