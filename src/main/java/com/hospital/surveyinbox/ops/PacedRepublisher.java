package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.camel.Exchange;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;

/**
 * The pace of a bulk requeue's events ({@code routes/inbox-requeue.camel.yaml}): the route queues each requeued
 * row's event on {@code seda:inbox-requeue-publish}, whose queue is {@link #QUEUE} (so this bean can count it),
 * and its consumer waits {@link #periodMillis()} before publishing each one
 * ({@code adapter.inbox.bulk-requeue-rate-per-second}, per pod), so 500 requeued rows reach a downstream that
 * just recovered as a steady stream, not at once.
 *
 * <p>The rows are RECEIVED and committed before their events are queued: an event this pod never publishes (it
 * stopped, Kafka refused it) is the redelivery job's, as for any lost event. The queue holds at most what the
 * rate publishes in half of {@code adapter.inbox.lost-event-after}, so the job never republishes a row whose
 * event is still waiting here. A bulk requeue first {@link #reserve reserves} room (atomically: two operators at
 * once never overfill the queue), requeues only as many rows as it got room for, and {@link #release releases}
 * the reservation when it is done, whatever happened.
 */
@Component("pacedRepublisher")
public class PacedRepublisher {

    /** Bean name of the queue of {@code seda:inbox-requeue-publish}. */
    public static final String QUEUE = "bulkRequeueEvents";

    private final BlockingQueue<Exchange> queue;
    private final long periodMillis;
    /** Most events queued at once: what the rate publishes in half of lost-event-after. */
    private final long capacity;
    /** Room taken by bulk requeues between {@link #reserve} and {@link #release}; guarded by this. */
    private long reserved;

    public PacedRepublisher(@Qualifier(QUEUE) BlockingQueue<Exchange> queue, AdapterProperties properties) {
        this.queue = queue;
        int perSecond = properties.getInbox().getBulkRequeueRatePerSecond();
        this.periodMillis = Math.max(1, Math.round(1000.0 / perSecond));
        this.capacity = Math.max(1, (long) perSecond * properties.getInbox().getLostEventAfter().toSeconds() / 2);
    }

    /** The wait after each published event: one event per period, even within a second (at most 1,000/s). */
    public long periodMillis() {
        return periodMillis;
    }

    /**
     * Takes room for up to {@code wanted} events: as many as fit now (0 when the queue is full). Every
     * reservation is handed back by {@link #release}, once the requeue has queued its events.
     */
    public synchronized int reserve(int wanted) {
        long room = capacity - queue.size() - reserved;
        int granted = (int) Math.max(0, Math.min(wanted, room));
        reserved += granted;
        return granted;
    }

    /** Hands back a reservation: the events queued under it are counted in the queue from now on. */
    public synchronized void release(int reservation) {
        reserved -= reservation;
    }

    /** Events queued and not yet published, and room reserved by bulk requeues in progress. */
    public synchronized int pending() {
        return (int) (queue.size() + reserved);
    }

    @Configuration(proxyBeanMethods = false)
    static class Queue {

        /**
         * The queue of {@code seda:inbox-requeue-publish}. An event still here when the pod stops is dropped (the
         * route does not wait for it): its row is RECEIVED, and the redelivery job republishes it.
         */
        @Bean(QUEUE)
        BlockingQueue<Exchange> bulkRequeueEvents() {
            return new LinkedBlockingQueue<>();
        }
    }
}
