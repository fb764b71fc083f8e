package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Gauges of the ledger for dashboards and alerts: {@code adapter.inbox.rows{status}} and
 * {@code adapter.inbox.oldest.pending.age} (seconds, database clock). Read at most every few seconds
 * however often Prometheus scrapes; a failed read keeps the last values (and is counted in health).
 */
@Component
public class InboxGauges {

    static final long REFRESH_NANOS = 5_000_000_000L;
    private static final Logger log = LoggerFactory.getLogger(InboxGauges.class);

    private final JdbcTemplate jdbc;
    private final Map<InboxStatus, Long> counts = new EnumMap<>(InboxStatus.class);
    private volatile double oldestPendingSeconds;
    private volatile long readAt;

    public InboxGauges(JdbcTemplate jdbc, MeterRegistry meters) {
        this.jdbc = jdbc;
        for (InboxStatus status : InboxStatus.values()) {
            counts.put(status, 0L);
            Gauge.builder("adapter.inbox.rows", () -> refreshed().counts.get(status))
                    .description("inbox rows per status").tag("status", status.name()).register(meters);
        }
        Gauge.builder("adapter.inbox.oldest.pending.age", () -> refreshed().oldestPendingSeconds)
                .description("age of the oldest RECEIVED|PROCESSING|FAILED row").baseUnit("seconds").register(meters);
    }

    private synchronized InboxGauges refreshed() {
        long now = System.nanoTime();
        if (readAt != 0 && now - readAt < REFRESH_NANOS) {
            return this;
        }
        readAt = now;
        try {
            Map<InboxStatus, Long> fresh = new EnumMap<>(InboxStatus.class);
            for (InboxStatus status : InboxStatus.values()) {
                fresh.put(status, 0L);
            }
            jdbc.query("SELECT status, count(*) FROM inbox_message GROUP BY status",
                    rs -> { fresh.put(InboxStatus.valueOf(rs.getString(1)), rs.getLong(2)); });
            counts.putAll(fresh);
            Double age = jdbc.queryForObject("""
                    SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)
                      FROM inbox_message
                     WHERE status IN ('RECEIVED', 'PROCESSING', 'FAILED')""", Double.class);
            oldestPendingSeconds = age == null ? 0 : age;
        } catch (RuntimeException e) {
            log.debug("Inbox gauges not refreshed: {}", e.toString());
        }
        return this;
    }
}
