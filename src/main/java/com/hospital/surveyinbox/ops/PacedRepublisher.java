package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.inbox.InboxEventPublisher;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Republishes the events of a bulk requeue at {@code adapter.inbox.bulk-requeue-rate-per-second} (per pod), so
 * 500 requeued rows reach a downstream that just recovered as a steady stream, not at once. The rows are
 * RECEIVED and committed before they are queued here: an event this instance never publishes (it stopped,
 * Kafka refused it) is the redelivery job's, as for any lost event. The queue holds at most what it can
 * publish in half of {@code adapter.inbox.lost-event-after}, so the job never republishes a row that is still
 * waiting here; a publish that waits on Kafka delays the next one (fixed delay, no catch-up burst). A bulk
 * requeue first {@link #reserve reserves} room (atomically: two operators at once never overfill the queue)
 * and requeues only as many rows as it got room for.
 */
@Component
public class PacedRepublisher implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(PacedRepublisher.class);

    private final InboxEventPublisher publisher;
    private final int perSecond;
    /** Most events queued at once: what the rate publishes in half of lost-event-after. */
    private final long capacity;
    private final ConcurrentLinkedQueue<InboxEvent> queue = new ConcurrentLinkedQueue<>();
    /** Room taken by bulk requeues between {@link #reserve} and {@link #republish(List, int)}; guarded by this. */
    private long reserved;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bulk-requeue-publisher");
        t.setDaemon(true);
        return t;
    });

    public PacedRepublisher(InboxEventPublisher publisher, AdapterProperties properties) {
        this.publisher = publisher;
        this.perSecond = properties.getInbox().getBulkRequeueRatePerSecond();
        this.capacity = Math.max(1, (long) perSecond * properties.getInbox().getLostEventAfter().toSeconds() / 2);
        // one event per tick: the rate is even within a second, not a burst at its start
        long periodMicros = Math.max(1, 1_000_000L / perSecond);
        ticker.scheduleWithFixedDelay(this::publishOne, periodMicros, periodMicros, TimeUnit.MICROSECONDS);
    }

    /**
     * Takes room for up to {@code wanted} events: as many as fit now (0 when the queue is full). Every
     * reservation is handed back by {@link #republish(List, int)}, with the events actually requeued.
     */
    public synchronized int reserve(int wanted) {
        long room = capacity - queue.size() - reserved;
        int granted = (int) Math.max(0, Math.min(wanted, room));
        reserved += granted;
        return granted;
    }

    /** Queues the events of a reservation of {@code reservation} events (at most that many) for publishing. */
    public synchronized void republish(List<InboxEvent> events, int reservation) {
        reserved -= reservation;
        queue.addAll(events.subList(0, Math.min(events.size(), reservation)));
    }

    /** Events queued and not yet published, and room reserved by bulk requeues in progress. */
    public synchronized int pending() {
        return (int) (queue.size() + reserved);
    }

    private void publishOne() {
        InboxEvent event = queue.poll();
        if (event == null) {
            return;
        }
        try {
            if (!publisher.publish(event)) {
                log.warn("Requeued inbox {} not published; the redelivery job will republish it", event.inboxId());
            }
        } catch (RuntimeException e) {
            log.warn("Requeued inbox {} not published ({}); the redelivery job will republish it",
                    event.inboxId(), e.getClass().getSimpleName());
        }
    }

    @Override
    public void destroy() {
        ticker.shutdownNow();
        if (!queue.isEmpty()) {
            log.info("{} requeued rows left for the redelivery job to republish", queue.size());
        }
    }
}
