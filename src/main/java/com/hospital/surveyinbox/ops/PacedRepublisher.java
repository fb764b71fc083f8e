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
 * waiting here; a publish that waits on Kafka delays the next one (fixed delay, no catch-up burst).
 */
@Component
public class PacedRepublisher implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(PacedRepublisher.class);

    private final InboxEventPublisher publisher;
    private final int perSecond;
    /** Most events queued at once: what the rate publishes in half of lost-event-after. */
    private final long capacity;
    private final ConcurrentLinkedQueue<InboxEvent> queue = new ConcurrentLinkedQueue<>();
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

    /** Whether {@code events} more fit in the queue now. */
    public boolean hasRoomFor(int events) {
        return queue.size() + (long) events <= capacity;
    }

    /** Queues events for publishing at the configured rate. */
    public void republish(List<InboxEvent> events) {
        queue.addAll(events);
    }

    /** Events queued and not yet published. */
    public int pending() {
        return queue.size();
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
