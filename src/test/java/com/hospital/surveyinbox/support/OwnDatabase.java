package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.inbox.SqlFiles;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * A database of a test's own on the shared PostgreSQL, migrated as the service migrates it, over one connection:
 * for tests of single statements that must see only their own rows. Dropped on {@link #close}.
 */
public final class OwnDatabase implements AutoCloseable {

    private final String name;
    private final SingleConnectionDataSource connection;
    private final JdbcTemplate jdbc;

    private OwnDatabase(String name) {
        this.name = name;
        this.connection = new SingleConnectionDataSource(EmbeddedServices.get().migratedDatabase(name), EmbeddedServices.DB_USER, "", true);
        this.jdbc = new JdbcTemplate(connection);
    }

    /** A new migrated database named {@code prefix} and a unique suffix. */
    public static OwnDatabase migrated(String prefix) {
        return new OwnDatabase(prefix + "_" + System.nanoTime());
    }

    public JdbcTemplate jdbc() {
        return jdbc;
    }

    /** A statement of {@code src/main/resources/sql} (camel-sql's {@code :#name} as Spring's {@code :name}). */
    public String statement(String file) {
        return SqlFiles.read(file).replace(":#", ":");
    }

    public NamedParameterJdbcTemplate named() {
        return new NamedParameterJdbcTemplate(jdbc);
    }

    @Override
    public void close() {
        connection.destroy();
        EmbeddedServices.get().dropDatabase(name);
    }
}
