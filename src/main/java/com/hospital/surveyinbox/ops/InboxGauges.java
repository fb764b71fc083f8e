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
 * replies that failed at least once and are not delivered yet). Read at most every few seconds however often
 * Prometheus scrapes, on a thread of their own: a scrape waits {@link #SCRAPE_WAIT_MILLIS} at most for a read, so a
 * slow database never makes it overrun the scrape timeout (which would drop every series of the pod).
 * A read that fails keeps the last values; the oldest row's age goes on growing from the last read (a backlog
 * alert must not see a frozen age when the database is what is failing); {@code adapter.inbox.gauges.staleness}
 * (seconds since the last read that succeeded) and {@code adapter.inbox.gauges.failures} say how old they are.
 * {@code adapter.redelivery.last.run.age}: seconds since the clustered redelivery job last recorded a tick (any pod's;
 * -1 before its first), so a job that stopped firing altogether is seen: no failed tick would say it.
 * {@code adapter.retention.overdue}: seconds the oldest closed row has been past its retention time with its payload
 * (patient data) still in it; the nightly job keeps it under a day, so more says the job does not run or cannot keep
 * up (a disabled trigger, a misfire skipped night after night) where no failed run would; -1 where retention is off.
 * {@code adapter.clock.skew}: this pod's clock minus the database's (seconds; positive: the pod runs ahead), read with
 * the others to within half the read's round trip (a read slower than {@link #SKEW_MAX_ROUND_TRIP_MILLIS} is not
 * used; NaN without a usable reading of the last minute). The rows' own clocks are the database's (retry delay,
 * stuck-row reset, lost events), but the clustered Quartz job runs on each pod's: a pod ahead fires the job early and
 * re-dates its trigger for every pod, and one 7.5 to 12.5 s ahead (where in Quartz's 5 s check-in interval it
 * looks) takes the other pods' check-ins for failed instances and recovers their jobs (SurveyInboxClockSkew warns at
 * 2 s).
 */
@Component
public class InboxGauges implements org.springframework.beans.factory.DisposableBean {

    static final long REFRESH_NANOS = 5_000_000_000L;
    /**
     * The retention gauge once a minute, not every 5 s: its alert waits two days, and its read steps over the entries
     * the night's redaction left at the front of its index until vacuum removes them.
     */
    static final long OVERDUE_REFRESH_NANOS = 60_000_000_000L;
    static final long SCRAPE_WAIT_MILLIS = 1_000;
    /** A clock reading whose round trip took longer than this is not used (its error is up to half of it). */
    static final long SKEW_MAX_ROUND_TRIP_MILLIS = 500;
    /** A clock reading older than this is not shown (NaN): reads slower than the bound for a minute, or failing. */
    static final long SKEW_KEPT_NANOS = 60_000_000_000L;
    private static final Logger log = LoggerFactory.getLogger(InboxGauges.class);

    private final InboxRowRepository rows;
    private final com.hospital.surveyinbox.config.AdapterProperties.Retention retention;
    /** The retention gauge's last reading (null: none yet); its {@code at} says when it was read. */
    private volatile Oldest overdue;
    private final long overdueRefreshNanos;
    private final Map<InboxStatus, Long> counts = new java.util.concurrent.ConcurrentHashMap<>();
    private final io.micrometer.core.instrument.Counter failures;
    private final java.util.concurrent.ExecutorService reader = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "inbox-gauges");
        thread.setDaemon(true);
        return thread;
    });
    private final java.util.concurrent.atomic.AtomicBoolean reading = new java.util.concurrent.atomic.AtomicBoolean();
    /** The oldest row's age and when it was read (one value, so the two are never of different reads). */
    private volatile Oldest oldest = new Oldest(0, System.nanoTime());
    private volatile long failingReplies;
    /** The redelivery job's last tick's age and when it was read; it grows from there while reads fail. */
    private volatile Oldest lastRun = new Oldest(-1, System.nanoTime());
    private volatile long readAt;
    private volatile long readOkAt = System.nanoTime();
    private volatile boolean failing;
    /** This pod's clock (the JVM's; a test's offset one). */
    private final java.time.Clock clock;
    /** This pod's clock minus the database's at the last usable reading, seconds, and when (nanoTime); NaN before it. */
    private volatile Oldest clockSkew = new Oldest(Double.NaN, System.nanoTime());

    @org.springframework.beans.factory.annotation.Autowired
    public InboxGauges(InboxRowRepository rows, MeterRegistry meters, com.hospital.surveyinbox.config.AdapterProperties properties) {
        this(rows, meters, properties, OVERDUE_REFRESH_NANOS, java.time.Clock.systemUTC());
    }

    /**
     * {@code overdueRefreshNanos}: how often the retention gauge is read (a test's shorter period); {@code clock}: the
     * pod's clock the database's is compared with.
     */
    InboxGauges(InboxRowRepository rows, MeterRegistry meters, com.hospital.surveyinbox.config.AdapterProperties properties,
                long overdueRefreshNanos, java.time.Clock clock) {
        this.rows = rows;
        this.clock = clock;
        this.retention = properties.getRetention();
        this.overdueRefreshNanos = overdueRefreshNanos;
        for (InboxStatus status : InboxStatus.values()) {
            counts.put(status, 0L);
            Gauge.builder("adapter.inbox.rows", () -> refreshed().counts.get(status))
                    .description("inbox rows per status").tag("status", status.name()).register(meters);
        }
        Gauge.builder("adapter.inbox.oldest.pending.age", () -> refreshed().oldestPendingAge())
                .description("age of the oldest RECEIVED|PROCESSING|FAILED row").baseUnit("seconds").register(meters);
        Gauge.builder("adapter.inbox.replies.failing", () -> refreshed().failingReplies)
                .description("owed replies to the legacy system that failed at least once and are not delivered yet")
                .register(meters);
        Gauge.builder("adapter.redelivery.last.run.age", () -> refreshed().lastRunAge())
                .description("seconds since the clustered redelivery job last recorded a tick; -1 before its first")
                .baseUnit("seconds").register(meters);
        Gauge.builder("adapter.retention.overdue", () -> refreshed().retentionOverdue())
                .description("seconds the oldest closed row has been past its retention time with its payload; -1: retention off")
                .baseUnit("seconds").register(meters);
        Gauge.builder("adapter.inbox.gauges.staleness", () -> refreshed().staleness())
                .description("seconds since the inbox gauges were last read from the database").baseUnit("seconds")
                .register(meters);
        Gauge.builder("adapter.clock.skew", () -> refreshed().clockSkew())
                .description("this pod's clock minus the database's (positive: the pod runs ahead); NaN without a reading"
                        + " of the last minute")
                .baseUnit("seconds").register(meters);
        failures = io.micrometer.core.instrument.Counter.builder("adapter.inbox.gauges.failures")
                .description("reads of the inbox gauges from the database that failed").register(meters);
    }

    /** The oldest unfinished row's age at the last read, plus the time since: it only grows while reads fail. */
    double oldestPendingAge() {
        Oldest read = oldest;
        return read.seconds() > 0 ? read.grown() : 0;
    }

    double lastRunAge() {
        Oldest read = lastRun;
        return read.seconds() >= 0 ? read.grown() : -1;
    }

    /** As the oldest row's age: it goes on growing from a positive read while reads fail. */
    double retentionOverdue() {
        if (!retention.isEnabled()) {
            return -1;
        }
        Oldest read = overdue;
        return read != null && read.seconds() > 0 ? read.grown() : 0;
    }

    /** The last reading, or NaN when there is none of the last minute (the alert must not act on an old one). */
    double clockSkew() {
        Oldest read = clockSkew;
        return System.nanoTime() - read.at() <= SKEW_KEPT_NANOS ? read.seconds() : Double.NaN;
    }

    double staleness() {
        return (System.nanoTime() - readOkAt) / 1e9;
    }

    private InboxGauges refreshed() {
        long now = System.nanoTime();
        if ((readAt == 0 || now - readAt >= REFRESH_NANOS) && reading.compareAndSet(false, true)) {
            readAt = now;
            java.util.concurrent.Future<?> read;
            try {
                read = reader.submit(this::read);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                reading.set(false); // shutting down
                return this;
            }
            try {
                read.get(SCRAPE_WAIT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                // the last values, aged: the read goes on and its values serve the next scrape
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return this;
    }

    private void read() {
        try {
            Map<InboxStatus, Long> fresh = new EnumMap<>(InboxStatus.class);
            for (InboxStatus status : InboxStatus.values()) {
                fresh.put(status, 0L);
            }
            for (Object[] row : rows.countByStatus()) {
                fresh.put(InboxStatus.valueOf((String) row[0]), ((Number) row[1]).longValue());
            }
            Oldest age = new Oldest(rows.oldestPendingAgeSeconds(), System.nanoTime());
            long replies = rows.failingReplies();
            Oldest run = new Oldest(rows.lastRedeliveryRunAgeSeconds(), System.nanoTime());
            long sent = clock.millis();
            double database = rows.databaseEpochSeconds();
            long back = clock.millis();
            if (back - sent <= SKEW_MAX_ROUND_TRIP_MILLIS) {
                clockSkew = new Oldest((sent + back) / 2000.0 - database, System.nanoTime()); // the read's midpoint
            }
            Oldest pastRetention = overdue;
            if (retention.isEnabled() && (pastRetention == null || System.nanoTime() - pastRetention.at() >= overdueRefreshNanos)) {
                pastRetention = new Oldest(rows.retentionOverdueSeconds(retention.getCompleted().toSeconds(),
                        retention.getDead().toSeconds()), System.nanoTime());
            }
            counts.putAll(fresh);
            lastRun = run;
            overdue = pastRetention;
            failingReplies = replies;
            oldest = age;
            readOkAt = System.nanoTime();
            if (failing) {
                failing = false;
                log.info("Inbox gauges read again from the database");
            }
        } catch (RuntimeException e) {
            failures.increment();
            if (!failing) {
                failing = true;
                log.warn("Inbox gauges not read from the database (last values kept, the oldest row's age goes on growing): {}",
                        LoggedFailure.describe(e));
            } else {
                log.debug("Inbox gauges not read: {}", LoggedFailure.describe(e));
            }
        } finally {
            reading.set(false);
        }
    }

    private record Oldest(double seconds, long at) {
        /** The age read, plus the time since it was read. */
        double grown() {
            return seconds + (System.nanoTime() - at) / 1e9;
        }
    }

    @Override
    public void destroy() {
        reader.shutdownNow();
    }
}
