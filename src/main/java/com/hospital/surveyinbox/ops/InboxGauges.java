package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.inbox.InboxStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Gauges of the ledger for dashboards and alerts: {@code adapter.inbox.rows{status}} and
 * {@code adapter.inbox.oldest.pending.age} (seconds, database clock), {@code adapter.inbox.replies.failing} (owed
 * replies that failed at least once and are not delivered yet). Read at most every few seconds
 * however often Prometheus scrapes; a failed read keeps the last values (and is counted in health).
 */
@Component
public class InboxGauges {

    static final long REFRESH_NANOS = 5_000_000_000L;
    private static final Logger log = LoggerFactory.getLogger(InboxGauges.class);

    private final InboxRowRepository rows;
    private final Map<InboxStatus, Long> counts = new EnumMap<>(InboxStatus.class);
    private volatile double oldestPendingSeconds;
    private volatile long failingReplies;
    private volatile long readAt;

    public InboxGauges(InboxRowRepository rows, MeterRegistry meters) {
        this.rows = rows;
        for (InboxStatus status : InboxStatus.values()) {
            counts.put(status, 0L);
            Gauge.builder("adapter.inbox.rows", () -> refreshed().counts.get(status))
                    .description("inbox rows per status").tag("status", status.name()).register(meters);
        }
        Gauge.builder("adapter.inbox.oldest.pending.age", () -> refreshed().oldestPendingSeconds)
                .description("age of the oldest RECEIVED|PROCESSING|FAILED row").baseUnit("seconds").register(meters);
        Gauge.builder("adapter.inbox.replies.failing", () -> refreshed().failingReplies)
                .description("owed replies to the legacy system that failed at least once and are not delivered yet")
                .register(meters);
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
            for (Object[] row : rows.countByStatus()) {
                fresh.put(InboxStatus.valueOf((String) row[0]), ((Number) row[1]).longValue());
            }
            counts.putAll(fresh);
            oldestPendingSeconds = rows.oldestPendingAgeSeconds();
            failingReplies = rows.failingReplies();
        } catch (RuntimeException e) {
            log.debug("Inbox gauges not refreshed: {}", LoggedFailure.describe(e));
        }
        return this;
    }
}
