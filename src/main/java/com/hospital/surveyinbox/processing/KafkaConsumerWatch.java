package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.apache.camel.CamelContext;
import org.apache.camel.Consumer;
import org.apache.camel.Route;
import org.apache.camel.ServiceStatus;
import org.apache.camel.component.kafka.KafkaConsumer;
import org.apache.camel.component.kafka.TaskHealthState;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * What the consumers' watch (route inbox-process-watch) reads and keeps: how many threads of a route's Kafka
 * consumer ended for good, and when a restart of that route is due.
 * <p>
 * Camel's Kafka consumer (pollOnError ERROR_HANDLER, its default) ends a thread for good when a poll throws an
 * authentication or authorization error (a broker certificate or an ACL changed under a running pod): the thread
 * closes its client, its partitions go to the other pods, and once every pod's threads ended nothing is processed,
 * even after the broker accepts again, until the pods restart. Such a thread no longer counts as recoverable in the
 * consumer's health states; Camel's own health check still says UP for it (it reads the "connected" flag).
 * <p>
 * Restarts back off: each one joins the group anew, a rebalance for every pod, so a cause that stays (an ACL not
 * fixed yet) restarts the route after one period, then two, four... at most every {@link #MAX_BACKOFF}. A restart
 * stops the consumers: it waits for the records being handed to workers (at most the hand-off's wait), not for the
 * rows the workers register (route inbox-process-row goes on).
 */
@Component
public class KafkaConsumerWatch {

    /** The longest wait between two restarts while the threads keep ending. */
    static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

    private final CamelContext camel;
    private final long periodNanos;
    private final LongSupplier clock;
    private final AtomicInteger ended = new AtomicInteger();
    private final Counter restarts;
    private final int consumers;
    private long backoffNanos;
    private long lastRestartAt;
    private boolean restarted;
    private boolean seenBefore;
    private volatile boolean restartFailed;

    @Autowired
    public KafkaConsumerWatch(CamelContext camel, AdapterProperties properties, MeterRegistry meters) {
        this(camel, Duration.ofMillis(properties.getKafka().getWatchPeriodMs()), properties.getKafka().getConsumers(),
                meters, System::nanoTime);
    }

    KafkaConsumerWatch(CamelContext camel, Duration period, int consumers, MeterRegistry meters, LongSupplier clock) {
        this.camel = camel;
        this.consumers = consumers;
        this.periodNanos = period.toNanos();
        this.clock = clock;
        this.backoffNanos = periodNanos;
        // registered at zero, so the alert reading them has a series from the start
        Gauge.builder("adapter.kafka.consumer.threads.ended", ended, AtomicInteger::get)
                .description("Kafka consumer threads of the processing route that ended for good (restarted by the watch)")
                .register(meters);
        this.restarts = Counter.builder("adapter.kafka.consumer.restarts")
                .description("Restarts of the processing route by the consumers' watch").register(meters);
    }

    /**
     * The threads of {@code routeId}'s Kafka consumer that ended for good; none while Camel stops, or while the route
     * is not started (stopping, or stopped on purpose), unless the watch's own restart left it stopped: then all of
     * them. Kept for the gauge.
     */
    public int ended(String routeId) {
        int count;
        if (camel.isStopping() || camel.isStopped()) {
            count = 0;
        } else if (!started(routeId)) {
            count = restartFailed ? consumers : 0;
        } else {
            count = endedStates(routeId).size();
        }
        ended.set(count);
        return count;
    }

    /**
     * True when {@code endedThreads} are to be restarted now: once two looks in a row found threads ended (a thread
     * that ended is not back by the next look), then again after one period, two, four... (at most {@link #MAX_BACKOFF})
     * from the end of the last restart while threads keep ending; an incident that begins twice {@link #MAX_BACKOFF}
     * after the last restart starts over at one period.
     */
    public synchronized boolean restartDue(int endedThreads) {
        if (endedThreads == 0) {
            seenBefore = false;
            return false;
        }
        if (!seenBefore) {
            seenBefore = true;
            return false;
        }
        if (!restarted) {
            return true;
        }
        long since = clock.getAsLong() - lastRestartAt;
        if (since >= 2 * MAX_BACKOFF.toNanos()) {
            backoffNanos = periodNanos;
            return true;
        }
        if (since < backoffNanos) {
            return false;
        }
        backoffNanos = Math.min(backoffNanos * 2, MAX_BACKOFF.toNanos());
        return true;
    }

    /** The watch restarted {@code routeId} (the step after controlbus's restart): counted, and timed from now. */
    public synchronized void restarted(String routeId) {
        restarts.increment();
        restarted = true;
        seenBefore = false;
        lastRestartAt = clock.getAsLong();
        restartFailed = !started(routeId);
    }

    /** The route left stopped by the watch's own restart (controlbus logs a failure and goes on). */
    public boolean restartFailed() {
        return restartFailed;
    }

    private boolean started(String routeId) {
        return started(camel, routeId);
    }

    /** {@code routeId} is started (both watches ask before and after the step they take on it). */
    static boolean started(CamelContext camel, String routeId) {
        ServiceStatus status = camel.getRouteController().getRouteStatus(routeId);
        return status != null && status.isStarted();
    }

    private List<TaskHealthState> endedStates(String routeId) {
        Route route = camel.getRoute(routeId);
        if (route == null) {
            return List.of();
        }
        Consumer consumer = route.getConsumer();
        if (!(consumer instanceof KafkaConsumer kafka)) {
            return List.of();
        }
        // Camel 4.17's KafkaFetchRecords: a thread that gave up creating or subscribing its client is "terminated";
        // one whose poll error strategy said "stop" is neither recoverable nor carries an error (the poll loop records
        // none; Camel's WARN "Exception ... caught by thread ... while polling" names it) and has its client id. A thread
        // still creating its client is not recoverable either, but has no client id yet (the id is set once the client
        // is built) or carries the creation's error (a broker name that does not resolve: KafkaUnresolvableTest)
        return kafka.healthStates().stream()
                .filter(state -> state.isTerminated()
                        || (!state.isRecoverable() && state.getLastError() == null && state.getClientId() != null))
                .toList();
    }
}
