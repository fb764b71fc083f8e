package com.hospital.surveyinbox.redelivery;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.StuckRow;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.apache.camel.Exchange;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Lazy;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-redeliver.camel.yaml}: {@link #stalledRows} ({@code inbox-redeliver-find-stalled}),
 * {@link #owedReplies} ({@code inbox-redeliver-find-replies}) and {@link #recordRun}
 * ({@code inbox-redeliver-record-run}). Each query takes a bounded batch, oldest first, so a large
 * backlog drains steadily instead of flooding the topic; ages are compared on the database clock.
 */
@Component("redeliverySweep")
public class RedeliverySweep {

    static final String LOST = "lostEvents";
    static final String RETRIES = "retries";
    static final String STUCK = "stuckReset";
    static final String REPLIES = "replies";
    private static final Logger log = LoggerFactory.getLogger(RedeliverySweep.class);

    private final InboxStore store;
    private final AdapterProperties properties;
    private final NamedParameterJdbcTemplate jdbc;
    private final MeterRegistry meters;
    private final Scheduler scheduler;

    public RedeliverySweep(InboxStore store, AdapterProperties properties, NamedParameterJdbcTemplate jdbc,
                           MeterRegistry meters, @Lazy Scheduler scheduler) {
        this.store = store;
        this.properties = properties;
        this.jdbc = jdbc;
        this.meters = meters;
        this.scheduler = scheduler;
    }

    /** Resets stuck rows, then collects the events to republish: stuck, lost, due retries (in arrival order). */
    public List<InboxEvent> stalledRows(Exchange exchange) {
        AdapterProperties.Inbox inbox = properties.getInbox();
        int batch = inbox.getRedeliverBatchSize();
        List<InboxEvent> events = new ArrayList<>();
        List<StuckRow> stuck = store.resetStuck(inbox.getStuckProcessingAfter(), batch, inbox.getMaxAttempts(),
                inbox.getRetryDelay());
        for (StuckRow row : stuck) {
            if (row.status() == InboxStatus.RECEIVED) {
                events.add(row.event());
            } else {
                log.warn("Inbox {} DEAD: its last allowed attempt lost its worker", row.event().inboxId());
            }
        }
        List<InboxEvent> lost = store.republishLost(inbox.getLostEventAfter(), batch);
        List<InboxEvent> retries = store.republishFailed(inbox.getRetryDelay(), batch);
        events.addAll(lost);
        events.addAll(retries);
        exchange.setProperty(STUCK, stuck.size());
        exchange.setProperty(LOST, lost.size());
        exchange.setProperty(RETRIES, retries.size());
        meters.counter("adapter.redelivery.republished", "kind", "stuck").increment(stuck.size());
        meters.counter("adapter.redelivery.republished", "kind", "lost-event").increment(lost.size());
        meters.counter("adapter.redelivery.republished", "kind", "retry").increment(retries.size());
        if (!events.isEmpty()) {
            log.info("Redelivery: republishing {} events ({} stuck reset, {} lost, {} retries)",
                    events.size(), stuck.size(), lost.size(), retries.size());
        }
        return events;
    }

    /** Replies owed and not delivered (pending or failed for longer than retry-delay, or stuck sending). */
    public List<Long> owedReplies(Exchange exchange) {
        AdapterProperties.Inbox inbox = properties.getInbox();
        store.resetStuckReplies(inbox.getStuckProcessingAfter());
        List<Long> ids = store.findOwedReplies(inbox.getRetryDelay(), inbox.getRedeliverBatchSize());
        exchange.setProperty(REPLIES, ids.size());
        meters.counter("adapter.redelivery.republished", "kind", "reply").increment(ids.size());
        return ids;
    }

    /** One row per tick in redelivery_run (which instance ran which fire time, and what it did). */
    public void recordRun(Exchange exchange) {
        Date scheduled = exchange.getMessage().getHeader("scheduledFireTime", Date.class);
        String instance;
        String name;
        try {
            instance = scheduler.getSchedulerInstanceId();
            name = scheduler.getSchedulerName();
        } catch (SchedulerException e) {
            instance = "unknown";
            name = "unknown";
        }
        jdbc.update("""
                INSERT INTO redelivery_run (scheduled_fire_time, instance, scheduler, lost_events, retries, stuck_reset, replies)
                VALUES (:scheduled, :instance, :scheduler, :lost, :retries, :stuck, :replies)
                """, new MapSqlParameterSource("scheduled", scheduled == null ? new Date() : scheduled)
                .addValue("instance", instance)
                .addValue("scheduler", name)
                .addValue("lost", exchange.getProperty(LOST, 0, Integer.class))
                .addValue("retries", exchange.getProperty(RETRIES, 0, Integer.class))
                .addValue("stuck", exchange.getProperty(STUCK, 0, Integer.class))
                .addValue("replies", exchange.getProperty(REPLIES, 0, Integer.class)));
        jdbc.update("DELETE FROM redelivery_run WHERE fired_at < now() - :days * INTERVAL '1 day'",
                new MapSqlParameterSource("days", properties.getInbox().getRedeliverHistoryDays()));
    }
}
