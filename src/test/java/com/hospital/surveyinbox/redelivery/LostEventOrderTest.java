package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.inbox.SqlFiles;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Which lost events a tick republishes first, on a database of its own: rows held behind an unfinished row of their
 * subject stay RECEIVED and are republished every lost-event-after; they must not keep a newer row whose event was
 * really lost waiting behind them, however many there are.
 */
class LostEventOrderTest {

    static String database;
    static SingleConnectionDataSource connection;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrated() {
        database = "lost_order_" + System.nanoTime();
        connection = new SingleConnectionDataSource(EmbeddedServices.get().migratedDatabase(database), EmbeddedServices.DB_USER, "", true);
        jdbc = new JdbcTemplate(connection);
    }

    @AfterAll
    static void drop() {
        connection.destroy();
        EmbeddedServices.get().dropDatabase(database);
    }

    @Test
    void aRowNeverPublishedComesBeforeOlderRowsRepublishedBeforeAndEveryRowHasItsTurn() {
        // three held rows, received an hour ago and republished ten minutes ago; a later row whose event was lost
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, created_at, published_at) SELECT 'HELD-' || g, 'SEND',"
                + " now() - INTERVAL '1 hour' + g * INTERVAL '1 second', now() - INTERVAL '10 minutes' FROM generate_series(1, 3) g");
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, created_at) VALUES ('LOST', 'SEND', now() - INTERVAL '30 minutes')");

        assertThat(tick()).containsExactlyInAnyOrder("LOST", "HELD-1");
        // the next tick takes those not republished within lost-event-after
        assertThat(tick()).containsExactlyInAnyOrder("HELD-2", "HELD-3");
    }

    private static List<String> tick() {
        Map<String, Object> parameters = Map.of("batch", 2, "lostEventAfterMillis", 60_000);
        return new NamedParameterJdbcTemplate(jdbc).queryForList(SqlFiles.read("republish-lost-events").replace(":#", ":"),
                parameters).stream().map(r -> (String) r.get("srvyDrawupNo")).toList();
    }
}
