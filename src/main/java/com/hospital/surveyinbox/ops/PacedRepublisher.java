package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;

/**
 * The pace of a bulk requeue's events ({@code routes/inbox-requeue.camel.yaml}): the route queues each requeued
 * row's event on {@code seda:inbox-requeue-publish}, whose queue is {@link #QUEUE} (so this bean can count it),
 * and its one consumer waits {@link #periodMillis()} before publishing each
 * ({@code adapter.inbox.bulk-requeue-rate-per-second}, per pod, at most 1,000), so 500 requeued rows reach a
 * downstream that just recovered as a steady stream, not at once.
 *
 * <p>The rows are RECEIVED and committed before their events are queued: an event this pod never publishes (it
 * stopped, Kafka refused it) is the redelivery job's, as for any lost event. The queue holds at most what the
 * pace publishes in half of {@code adapter.inbox.lost-event-after}, so the job never republishes a row whose
 * event is still waiting here. A bulk requeue first {@link #reserve reserves} room (atomically: two operators at
 * once never overfill the queue), requeues only as many rows as it got room for, moves each event it queues from
 * its reservation to the queue ({@link #queued}), and {@link #release releases} what is left of the reservation
 * when it is done, whatever happened.
 */
@Component("pacedRepublisher")
public class PacedRepublisher implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(PacedRepublisher.class);

    /** Bean name of the queue of {@code seda:inbox-requeue-publish}. */
    public static final String QUEUE = "bulkRequeueEvents";

    private final BlockingQueue<Exchange> queue;
    private final long periodMillis;
    /** Most events queued at once: what the pace publishes in half of lost-event-after. */
    private final long capacity;
    /** Room held by bulk requeues in progress, not yet in the queue; guarded by this. */
    private long reserved;

    /** Room a bulk requeue holds: {@code granted} events, {@code queued} of them already in the queue. */
    public static final class Reservation {
        private final int granted;
        private int queued;

        Reservation(int granted) {
            this.granted = granted;
        }

        public int getGranted() {
            return granted;
        }
    }

    public PacedRepublisher(@Qualifier(QUEUE) BlockingQueue<Exchange> queue, AdapterProperties properties) {
        this.queue = queue;
        int perSecond = properties.getInbox().getBulkRequeueRatePerSecond();
        // rounded up: never faster than the rate set
        this.periodMillis = (long) Math.ceil(1000.0 / perSecond);
        // from the period the route really waits (whole milliseconds), not the configured rate
        this.capacity = Math.max(1, properties.getInbox().getLostEventAfter().toMillis() / 2 / periodMillis);
    }

    /** The wait before each published event: one event per period, even within a second, never above the rate. */
    public long periodMillis() {
        return periodMillis;
    }

    /**
     * Takes room for up to {@code wanted} events: as many as fit now (none when the queue is full). Every
     * reservation is handed back by {@link #release}, once the requeue has queued its events.
     */
    public synchronized Reservation reserve(int wanted) {
        long room = capacity - queue.size() - reserved;
        int granted = (int) Math.max(0, Math.min(wanted, room));
        reserved += granted;
        return new Reservation(granted);
    }

    /** One event of the reservation was queued: it is counted in the queue from now on. */
    public synchronized void queued(Reservation reservation) {
        if (reservation.queued < reservation.granted) {
            reservation.queued++;
            reserved--;
        }
    }

    /** Hands back what the reservation did not queue. */
    public synchronized void release(Reservation reservation) {
        reserved -= reservation.granted - reservation.queued;
        reservation.queued = reservation.granted;
    }

    /** Events queued and not yet published, and room reserved by bulk requeues in progress. */
    public synchronized int pending() {
        return (int) (queue.size() + reserved);
    }

    private volatile boolean running;

    @Override
    public void start() {
        running = true;
    }

    /**
     * Called as the pod stops, after the web server and before Camel (which drops what is still queued,
     * purgeWhenStopping): those rows are RECEIVED, the redelivery job republishes them.
     */
    @Override
    public void stop() {
        running = false;
        if (!queue.isEmpty()) {
            log.info("{} requeued rows' events still queued at shutdown; the redelivery job republishes them", queue.size());
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stopped in the web server's phase (Integer.MAX_VALUE - 2048), before Camel's context (MAX_VALUE - 2049). */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 2048;
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
