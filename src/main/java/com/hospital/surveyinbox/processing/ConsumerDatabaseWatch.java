package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.DatabaseFailures;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.camel.CamelContext;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * What the consumers' watch (route inbox-process-watch) reads to take this pod's Kafka consumers out of the group while
 * its workers cannot reach the database, and back in once it answers.
 * <p>
 * A pod that cannot reach the database while the others can (its node's network, a NetworkPolicy, a pool whose
 * connections hang) kept its partitions: each event it took failed its claim, its row waited for the redelivery job,
 * which republished it to the same partition, to the same pod. A share of every subject's rows waited as long as the
 * pod stayed up, the readiness probe (deliberately UP through a database outage) and the liveness probe saying nothing.
 * Left, its partitions go to the pods that can claim; with every pod away (the database itself down) the events wait
 * in Kafka, uncommitted, and are read at once when the pods come back.
 * <p>
 * Away when, for {@link #LOOKS_TO_LEAVE} watch periods, the workers' statements only failed for want of a connection
 * (at least {@link #LOOKS_TO_LEAVE} of them, the last within a period, none answered meanwhile) and a probe fails too;
 * back when a probe
 * ({@code SELECT 1}, this pod's own pool) answers at {@link #LOOKS_TO_REJOIN} looks in a row and the pod has been
 * away for its minimum: one watch period doubling (up to {@link KafkaConsumerWatch#MAX_BACKOFF}) while it keeps
 * leaving again soon after coming back (a database that answers a probe but not the workers' statements).
 */
@Component
public class ConsumerDatabaseWatch {

    static final int LOOKS_TO_LEAVE = 3;
    static final int LOOKS_TO_REJOIN = 2;

    private final CamelContext camel;
    private final BooleanSupplier probe;
    private final long periodNanos;
    private final LongSupplier clock;
    private final AtomicInteger failuresInARow = new AtomicInteger();
    private long failingSince;
    private long lastFailureAt;
    private final AtomicInteger away = new AtomicInteger();
    private final Counter leaves;
    private long leftAt;
    private long rejoinedAt = Long.MIN_VALUE;
    private long awayAtLeastNanos;
    private int answeringLooks;

    @Autowired
    public ConsumerDatabaseWatch(CamelContext camel, JdbcTemplate jdbc, AdapterProperties properties, MeterRegistry meters) {
        this(camel, () -> {
            try {
                return Integer.valueOf(1).equals(jdbc.queryForObject("SELECT 1", Integer.class));
            } catch (RuntimeException e) {
                return false;
            }
        }, Duration.ofMillis(properties.getKafka().getWatchPeriodMs()), meters, System::nanoTime);
    }

    ConsumerDatabaseWatch(CamelContext camel, BooleanSupplier probe, Duration period, MeterRegistry meters, LongSupplier clock) {
        this.camel = camel;
        this.probe = probe;
        this.periodNanos = period.toNanos();
        this.clock = clock;
        this.awayAtLeastNanos = periodNanos;
        Gauge.builder("adapter.kafka.consumer.away", away, AtomicInteger::get)
                .description("1 while this pod's Kafka consumers left the group because its workers could not reach the"
                        + " database (its partitions with the other pods)").register(meters);
        this.leaves = Counter.builder("adapter.kafka.consumer.database.leaves")
                .description("times this pod's Kafka consumers left the group because its workers could not reach the database")
                .register(meters);
    }

    /**
     * A worker's statement failed for the database's unavailability, its tries spent (inbox-process-row-errors).
     * Counted only when the database could not be reached at all ({@link DatabaseFailures#unreachable}: no connection,
     * class 08, 57P0x); a statement or lock timeout, a deadlock, a full disk is the database's state, which every pod
     * shares and leaving would not cure.
     */
    public synchronized void failed(Throwable failure) {
        if (!DatabaseFailures.unreachable(failure)) {
            return;
        }
        long now = clock.getAsLong();
        if (failuresInARow.getAndIncrement() == 0) {
            failingSince = now;
        }
        lastFailureAt = now;
    }

    /** A worker's claim statement answered (claimed or refused): the database is reachable from here. */
    public synchronized void answered() {
        failuresInARow.set(0);
    }

    /**
     * True when this pod's consumers are to leave the group now (the watch then stops {@code routeId}): at least
     * {@link #LOOKS_TO_LEAVE} failures since the last statement that answered, the first {@link #LOOKS_TO_LEAVE}
     * periods ago, the last within a period, and the probe failing now.
     */
    public boolean leaveDue(String routeId) {
        long since;
        synchronized (this) {
            if (!failingLongEnough(routeId)) {
                return false;
            }
            since = failingSince;
        }
        // probed outside the lock: the probe waits up to the pool's wait and the socket timeout (6 s), and every
        // worker's claim takes this lock to say it answered or failed; held across it, all workers stalled
        if (probe.getAsBoolean()) {
            return false;
        }
        synchronized (this) {
            // the same run of failures (a statement that answered meanwhile started a new one), still long enough
            return failingSince == since && failingLongEnough(routeId);
        }
    }

    private boolean failingLongEnough(String routeId) {
        long now = clock.getAsLong();
        return away.get() == 0 && !stopping() && started(routeId) && failuresInARow.get() >= LOOKS_TO_LEAVE
                && now - failingSince >= LOOKS_TO_LEAVE * periodNanos && now - lastFailureAt <= periodNanos;
    }

    /** The watch stopped the consumer route: away from now, for at least one period, doubling when left again soon. */
    public synchronized void left(String routeId) {
        if (stopping() || started(routeId)) {
            return; // the service stops, or the stop did not happen (controlbus logs why): looked at again next period
        }
        long now = clock.getAsLong();
        awayAtLeastNanos = rejoinedAt != Long.MIN_VALUE && now - rejoinedAt < 2 * KafkaConsumerWatch.MAX_BACKOFF.toNanos()
                ? Math.min(awayAtLeastNanos * 2, KafkaConsumerWatch.MAX_BACKOFF.toNanos()) : periodNanos;
        leftAt = now;
        answeringLooks = 0;
        away.set(1);
        leaves.increment();
    }

    /** True when the consumers are away and the database answers this pod again (probed at each look while away). */
    public boolean rejoinDue() {
        if (away.get() == 0 || stopping()) {
            return false;
        }
        boolean answers = probe.getAsBoolean(); // outside the lock, as in leaveDue
        synchronized (this) {
            if (away.get() == 0) {
                return false;
            }
            answeringLooks = answers ? answeringLooks + 1 : 0;
            return answeringLooks >= LOOKS_TO_REJOIN && clock.getAsLong() - leftAt >= awayAtLeastNanos;
        }
    }

    /** The watch started the consumer route again; if it did not start, the next look tries again. */
    public synchronized void rejoined(String routeId) {
        if (!started(routeId)) {
            answeringLooks = 0;
            return;
        }
        away.set(0);
        failuresInARow.set(0);
        rejoinedAt = clock.getAsLong();
    }

    private boolean stopping() {
        return camel.isStopping() || camel.isStopped();
    }

    private boolean started(String routeId) {
        return KafkaConsumerWatch.started(camel, routeId);
    }
}
