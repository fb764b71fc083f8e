package com.hospital.surveyinbox.redelivery;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Lazy;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-redeliver.camel.yaml} that compute: the statements' named parameters
 * ({@link #params}), the tick's candidates as one list ({@link #candidates}; the route filters and orders
 * them), the publishing budget, and the run record with the Quartz instance that ran it ({@link #runRecord}). The statements themselves
 * are {@code sql/reset-stuck-rows.sql}, {@code republish-lost-events.sql}, {@code republish-due-retries.sql},
 * {@code reset-stuck-replies.sql}, {@code find-owed-replies.sql} and {@code record-redelivery-run.sql}.
 */
@Component("redeliverySweep")
public class RedeliverySweep {

    private static final Logger log = LoggerFactory.getLogger(RedeliverySweep.class);

    private final AdapterProperties properties;
    private final MeterRegistry meters;
    private final Scheduler scheduler;
    private final java.time.Clock clock;

    /**
     * The tick's budgets read the time from a {@code java.time.Clock} bean if there is one (tests), else a
     * {@link com.hospital.surveyinbox.config.MonotonicClock}: a step of the pod's wall clock neither ends a tick's
     * publishing at once nor lets its replies run for the length of a step back.
     */
    public RedeliverySweep(AdapterProperties properties, MeterRegistry meters, @Lazy Scheduler scheduler,
                           org.springframework.beans.factory.ObjectProvider<java.time.Clock> clock) {
        this.properties = properties;
        this.meters = meters;
        this.scheduler = scheduler;
        this.clock = clock.getIfUnique(com.hospital.surveyinbox.config.MonotonicClock::new);
        // registered at zero: the series exist for the dashboard and alerts (k8s/monitoring) before the
        // first tick, and on an instance that opted out of the job
        for (String kind : new String[] {"stuck", "lost-event", "retry", "reply"}) {
            meters.counter("adapter.redelivery.republished", "kind", kind);
        }
        meters.counter("adapter.redelivery.replies.deferred");
    }

    /** Named parameters of every statement of one tick, from {@code adapter.inbox.*}. */
    public Map<String, Object> params() {
        AdapterProperties.Inbox inbox = properties.getInbox();
        Map<String, Object> params = new HashMap<>();
        params.put("lostEventAfterMillis", inbox.getLostEventAfter().toMillis());
        params.put("retryDelayMillis", inbox.getRetryDelay().toMillis());
        params.put("replyMaxRetryDelayMillis", inbox.getReplyMaxRetryDelay().toMillis());
        params.put("stuckAfterMillis", inbox.getStuckProcessingAfter().toMillis());
        params.put("batch", inbox.getRedeliverBatchSize());
        params.put("maxAttempts", inbox.getMaxAttempts());
        params.put("historyDays", inbox.getRedeliverHistoryDays());
        return params;
    }

    /**
     * The tick's candidates as one list: reset stuck rows (RECEIVED again, DEAD at the attempt limit, or the
     * next row of a subject whose row just went DEAD), lost events and due retries. Which of them are
     * republished, and in what order, is the route's ({@code inbox-redeliver-order-events},
     * {@code inbox-redeliver-if-not-dead}).
     */
    public List<Map<String, Object>> candidates(List<Map<String, Object>> stuck, List<Map<String, Object>> lost,
                                                List<Map<String, Object>> retries) {
        // one event per row: a row released as a reset row's successor may also be due as a lost event. Each is
        // tagged with its kind (republishedKind: stuck, lost-event, retry; none for a released successor not also due), counted
        // once Kafka took its event (budgetOutcome): counted when selected, a broker outage showed hundreds of
        // republishes a minute while nothing was published
        Map<Object, Map<String, Object>> byRow = new java.util.LinkedHashMap<>();
        for (Map<String, Object> row : stuck) {
            byRow.putIfAbsent(row.get("inboxId"), tagged(row, successor(row) ? null : "stuck"));
        }
        // a released successor that is due anyway is counted as what it is due as
        java.util.function.BinaryOperator<Map<String, Object>> firstKind = (first, later) -> first.get(KIND) == null ? later : first;
        lost.forEach(row -> byRow.merge(row.get("inboxId"), tagged(row, "lost-event"), firstKind));
        retries.forEach(row -> byRow.merge(row.get("inboxId"), tagged(row, "retry"), firstKind));
        List<Map<String, Object>> events = new ArrayList<>(byRow.values());
        if (!events.isEmpty()) {
            log.info("Redelivery: {} candidates ({} stuck reset, {} lost, {} retries)",
                    events.size(), stuck.size(), lost.size(), retries.size());
        }
        return events;
    }

    /** Key of a candidate's kind, as {@link #candidates} tags it; null for a released successor not also due. */
    static final String KIND = "republishedKind";

    /** A row reset-stuck-rows.sql released as a reset row's successor, not reset itself. */
    private static boolean successor(Map<String, Object> row) {
        return "SUCCESSOR".equals(row.get("status"));
    }

    private static Map<String, Object> tagged(Map<String, Object> row, String kind) {
        Map<String, Object> copy = new HashMap<>(row);
        copy.put(KIND, kind);
        return copy;
    }

    /**
     * Step {@code inbox-redeliver-count-dead}, right after the reset (which commits on its own, so a later step's
     * failure must not leave them uncounted): a reset whose abandoned attempt was the last allowed went DEAD,
     * counted as a worker's DEAD outcome is (the DEAD alert counts rows going DEAD, not the DEAD rows, which a
     * requeue lowers).
     */
    public void countDead(List<Map<String, Object>> stuck) {
        meters.counter(com.hospital.surveyinbox.processing.ProcessingRecord.OUTCOMES, "outcome", "dead").increment(
                stuck.stream().filter(r -> "DEAD".equals(r.get("status"))).count());
    }

    /**
     * The tick's publishing budget, taken with the reply budget after the tick's bookkeeping: until
     * {@code adapter.inbox.redeliver-publish-deadline} from now, and while Kafka takes events.
     */
    public PublishBudget budget() {
        return new PublishBudget(clock, properties.getInbox().getRedeliverPublishDeadline());
    }

    java.time.Clock clock() {
        return clock;
    }

    /** The tick's budget for owed replies, taken just before them: half the publish deadline from now. */
    public PublishBudget replyBudget() {
        return new PublishBudget(clock, properties.getInbox().getRedeliverPublishDeadline().dividedBy(2));
    }

    /** Logs and counts the owed replies the reply budget left for a later tick. */
    public void repliesSpent(PublishBudget replyBudget) {
        if (replyBudget.skipped() > 0) {
            meters.counter("adapter.redelivery.replies.deferred").increment(replyBudget.skipped());
            log.warn("Redelivery: {} owed replies left for a later tick (reply deadline reached)", replyBudget.skipped());
        }
    }

    /**
     * One publish's outcome against the budget (the publish route's {@code inboxPublished}); a published event is
     * counted under its candidate's kind ({@code adapter_redelivery_republished_total}, the run's record).
     */
    public void budgetOutcome(PublishBudget budget, Boolean published, String kind) {
        budget.published(Boolean.TRUE.equals(published));
        if (Boolean.TRUE.equals(published) && kind != null) {
            budget.tookOne(kind);
            meters.counter("adapter.redelivery.republished", "kind", kind).increment();
        }
    }

    /**
     * A candidate the closed budget left (the deadline passed, or an earlier publish failed), by its kind: taken as
     * RECEIVED (a lost event, a reset row) or as FAILED (a due retry); a released successor was not stamped.
     */
    public void notPublished(PublishBudget budget, Long inboxId, String kind) {
        if (kind != null) {
            budget.notPublished(inboxId, "retry".equals(kind));
        }
    }

    /**
     * Named parameters of {@code sql/unstamp-unpublished.sql}: the candidates the closed budget left, taken as
     * RECEIVED and as FAILED, or null when it left none.
     */
    public Map<String, Object> unpublished(PublishBudget budget) {
        String received = budget.unpublishedIds(false);
        String failed = budget.unpublishedIds(true);
        return received.isEmpty() && failed.isEmpty() ? null : Map.of("received", received, "failed", failed);
    }

    /** Logs what a closed budget left for the next tick. */
    public void budgetSpent(PublishBudget budget) {
        if (budget.skipped() > 0) {
            meters.counter("adapter.redelivery.deferred").increment(budget.skipped());
            log.warn("Redelivery: {} events left for a later tick ({})", budget.skipped(),
                    budget.kafkaFailed() ? "Kafka did not take an event" : "publish deadline reached");
        }
    }

    /** Named parameters of {@code sql/record-redelivery-run.sql}: which instance ran which fire time, and what it did. */
    public Map<String, Object> runRecord(Date scheduledFireTime, List<Map<String, Object>> stuck,
                                         List<Map<String, Object>> replies, PublishBudget replyBudget, PublishBudget budget) {
        int repliesTried = replies.size() - replyBudget.skipped();
        meters.counter("adapter.redelivery.republished", "kind", "reply").increment(repliesTried);
        String instance;
        String name;
        try {
            instance = scheduler.getSchedulerInstanceId();
            name = scheduler.getSchedulerName();
        } catch (SchedulerException e) {
            instance = "unknown";
            name = "unknown";
        }
        Map<String, Object> params = new HashMap<>(params());
        params.put("scheduled", new java.sql.Timestamp((scheduledFireTime == null ? new Date() : scheduledFireTime).getTime()));
        params.put("instance", instance);
        params.put("scheduler", name);
        params.put("stuck", stuck.stream().filter(r -> !successor(r)).count());
        // what was republished (Kafka took it); the stuck column counts the resets, done whether or not published
        params.put("lost", budget.republished("lost-event"));
        params.put("retries", budget.republished("retry"));
        params.put("replies", repliesTried);
        return params;
    }
}
