package com.hospital.surveyinbox.retention;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The retention job's step ({@code routes/inbox-retention.camel.yaml}, {@code inbox-retention-redact}):
 * removes the payload — the only column holding patient data — of COMPLETED rows closed longer than
 * {@code adapter.retention.completed} and DEAD rows closed longer than {@code adapter.retention.dead}.
 * RECEIVED, PROCESSING and FAILED rows are never touched, whatever their age: their payload is still
 * needed. Works in bounded batches so a first run over a large table does not hold long locks.
 */
@Component("retentionSweep")
public class RetentionSweep {

    static final String REDACT = """
            UPDATE inbox_message
               SET payload = NULL,
                   payload_key_id = NULL,
                   redacted_at = now()
             WHERE id IN (SELECT id
                            FROM inbox_message
                           WHERE status = :status
                             AND redacted_at IS NULL
                             AND updated_at < now() - :ageMillis * INTERVAL '1 millisecond'
                           LIMIT :batch
                             FOR UPDATE SKIP LOCKED)
            """;

    private static final Logger log = LoggerFactory.getLogger(RetentionSweep.class);

    private final NamedParameterJdbcTemplate jdbc;
    private final AdapterProperties properties;
    private final MeterRegistry meters;

    public RetentionSweep(NamedParameterJdbcTemplate jdbc, AdapterProperties properties, MeterRegistry meters) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.meters = meters;
    }

    /** Redacts every due payload; returns how many rows it redacted. */
    public int redact() {
        AdapterProperties.Retention retention = properties.getRetention();
        int completed = redact("COMPLETED", retention.getCompleted(), retention.getBatchSize());
        int dead = redact("DEAD", retention.getDead(), retention.getBatchSize());
        meters.counter("adapter.retention.redacted", "status", "COMPLETED").increment(completed);
        meters.counter("adapter.retention.redacted", "status", "DEAD").increment(dead);
        if (completed + dead > 0) {
            log.info("Retention: payload removed from {} COMPLETED and {} DEAD rows", completed, dead);
        }
        return completed + dead;
    }

    private int redact(String status, Duration age, int batch) {
        int total = 0;
        int changed;
        do {
            changed = jdbc.update(REDACT, new MapSqlParameterSource("status", status)
                    .addValue("ageMillis", age.toMillis()).addValue("batch", batch));
            total += changed;
        } while (changed == batch);
        return total;
    }
}
