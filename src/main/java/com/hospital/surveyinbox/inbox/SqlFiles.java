package com.hospital.surveyinbox.inbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads a statement of {@code src/main/resources/sql/} for the few transitions that run from Java (the
 * claim inside the idempotent repository). Routes run the same folder through camel-sql
 * ({@code sql:classpath:sql/NAME.sql}); one statement per file, whoever runs it.
 */
public final class SqlFiles {

    private SqlFiles() {
    }

    /** The statement of {@code sql/NAME.sql}, comments included (PostgreSQL and Spring skip them). */
    public static String read(String name) {
        try (InputStream in = SqlFiles.class.getResourceAsStream("/sql/" + name + ".sql")) {
            if (in == null) {
                throw new IllegalStateException("no statement sql/" + name + ".sql on the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
