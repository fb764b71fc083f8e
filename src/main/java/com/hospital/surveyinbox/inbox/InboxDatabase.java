package com.hospital.surveyinbox.inbox;

import java.nio.charset.StandardCharsets;
import org.apache.camel.Header;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * This database's identity (V25: a random id written once), carried by every event as the record header
 * {@code inboxDatabase}: an event whose header names another database is another deployment's (one sharing the
 * topic and the consumer group), never a row this database lost. Read once, when the service is ready; while the
 * database cannot be read it is unknown (null): an event is then published without it and taken as this database's.
 */
@Component("inboxDatabase")
public class InboxDatabase {

    /** The record header an event carries its database's identity in. */
    public static final String HEADER = "inboxDatabase";

    private static final Logger log = LoggerFactory.getLogger(InboxDatabase.class);

    private final JdbcTemplate jdbc;
    /** The identity and when it was written (epoch ms), read together. */
    private volatile Identity identity;

    private record Identity(String id, long createdAtMillis) {
    }

    public InboxDatabase(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Read once the service is up (Flyway has just run), not on a publishing or consuming thread at its first event;
     * a database that cannot be read then is read at the first use.
     */
    @org.springframework.context.event.EventListener(org.springframework.boot.context.event.ApplicationReadyEvent.class)
    public void readAtStart() {
        id();
    }

    /** Step {@code inbox-publish-database}: this database's identity, or null while it cannot be read. */
    public String id() {
        Identity known = identity();
        return known == null ? null : known.id();
    }

    private Identity identity() {
        Identity known = identity;
        if (known == null) {
            try {
                known = jdbc.queryForObject("SELECT CAST(id AS TEXT), created_at FROM inbox_database",
                        (rs, row) -> new Identity(rs.getString(1), rs.getTimestamp(2).getTime()));
                identity = known;
            } catch (DataAccessException e) {
                log.debug("Database identity not read: {}", e.getClass().getSimpleName());
                return null;
            }
        }
        return known;
    }

    /**
     * Step {@code inbox-process-foreign-age}: whether a foreign event was published before this database's identity
     * was written (its Kafka timestamp): then this database was created anew or restored from a backup older than its
     * identity, and the event is most likely of a row it lost, not another deployment's (whose events go on arriving).
     */
    public boolean publishedBeforeIdentity(@Header(org.apache.camel.component.kafka.KafkaConstants.TIMESTAMP) Long publishedAt) {
        Identity known = identity();
        return known != null && publishedAt != null && publishedAt > 0 && publishedAt < known.createdAtMillis();
    }

    /**
     * Step {@code inbox-process-when-foreign}: whether the event names another database than this one. An event
     * without the header (an earlier release published it), or while this database's identity cannot be read, is
     * taken as this database's (the worker then meets the database's state as before).
     */
    public boolean foreign(@Header(HEADER) Object header) {
        String named = header instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8)
                : header == null ? null : header.toString();
        if (named == null || named.isBlank()) {
            return false;
        }
        String own = id();
        return own != null && !own.equals(named.strip());
    }
}
