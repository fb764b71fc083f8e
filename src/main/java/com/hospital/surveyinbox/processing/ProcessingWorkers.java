package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The workers that register rows ({@code routes/inbox-process.camel.yaml}: the consumer route hands each
 * record to {@code inbox-process-row} through a wire tap with {@code executorService: inboxProcessPool}).
 *
 * <p>Why a pool shared by all consumers: a Kafka consumer owns its partitions, and with one record at a
 * time per consumer the consumer whose partitions drew the most keys bounds a drain (measured: the busiest
 * of 16 consumers held 30&nbsp;% more than the average, 65&nbsp;% efficiency for 273 messages). Here any
 * free worker takes any record, so the registrations in flight stay at {@code adapter.kafka.workers}
 * whatever the keys' spread.
 *
 * <p>A hand-off never queues: {@link #execute} waits for a free worker (the consumer thread stops polling
 * meanwhile — Kafka's own back-pressure), so no record sits in memory unclaimed: a worker claims it the
 * moment it is handed over. The wait is bounded ({@code adapter.kafka.max-poll-interval-ms} / (2 x
 * max-poll-records)) and fair (the longest-waiting consumer gets the next free worker): with every worker
 * held by slow downstreams, an unbounded wait kept a consumer from poll() past max.poll.interval.ms and the
 * broker threw it out of the group (rebalance, failed commits, redelivered events). A record not handed over
 * in time is refused; the route logs it and commits its offset, and the row — still RECEIVED or FAILED — is
 * the redelivery job's, as when an instance dies. Rows of one subject may now be handed to two workers at once;
 * the claim's ordering guard (an earlier unfinished row, or any row of the subject being registered, blocks it)
 * keeps them in arrival order, and the row that finishes or fails republishes the held one (find-successor), as
 * it did for the redelivery job's races.
 */
public final class ProcessingWorkers extends ThreadPoolExecutor {

    private final Semaphore free;
    private volatile boolean stopping;

    private final long handOffWaitNanos;
    private final io.micrometer.core.instrument.Counter refused;

    public ProcessingWorkers(AdapterProperties properties, MeterRegistry meters) {
        this(properties.getKafka().getWorkers(), properties.getKafka().getHandOffWait(), meters);
    }

    ProcessingWorkers(int workers, java.time.Duration handOffWait, MeterRegistry meters) {
        super(workers, workers, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), threadFactory());
        this.free = new Semaphore(workers, true);
        this.handOffWaitNanos = handOffWait.toNanos();
        this.refused = io.micrometer.core.instrument.Counter.builder("adapter.processing.handoffs.refused")
                .description("records not handed to a worker in time (left to the redelivery job)").register(meters);
        prestartAllCoreThreads();
        Gauge.builder("adapter.processing.workers.busy", this, ProcessingWorkers::busy)
                .description("rows being registered now (of adapter.kafka.workers)").register(meters);
        Gauge.builder("adapter.processing.workers", this, ThreadPoolExecutor::getMaximumPoolSize)
                .description("workers that register rows (adapter.kafka.workers)").register(meters);
    }

    /**
     * From now on no record is started: Camel is stopping (ProcessingWorkersConfiguration). Its shutdown waits
     * for the rows in flight, but a suspended Kafka consumer keeps handing over the rest of its polled batch, and
     * a row started late in that wait was cut off at its deadline.
     */
    public void stopTakingWork() {
        stopping = true;
    }

    /** Camel started (again): records are started. */
    public void takeWork() {
        stopping = false;
    }

    boolean isStopping() {
        return stopping;
    }

    /** Consumers waiting for a free worker now (tests). */
    int waitingForWorker() {
        return free.getQueueLength();
    }

    /** Runs the task on a free worker; waits (the caller is a consumer thread) until one is free. */
    @Override
    public void execute(Runnable task) {
        if (isShutdown()) {
            throw new RejectedExecutionException("processing workers stopped");
        }
        if (stopping) {
            throw new WorkersStoppingException();
        }
        try {
            // one wait, so the semaphore's fairness holds (the longest-waiting consumer gets the next free worker);
            // a consumer already waiting when the stop begins learns of it when a worker frees or the wait ends
            boolean acquired = free.tryAcquire(handOffWaitNanos, TimeUnit.NANOSECONDS);
            if (!acquired && stopping) {
                throw new WorkersStoppingException(); // not a refused hand-off: the stop, logged as such
            }
            if (!acquired) {
                refused.increment();
                throw new RejectedExecutionException("no free worker within " + TimeUnit.NANOSECONDS.toMillis(handOffWaitNanos)
                        + " ms: the record is left to the redelivery job, so the consumer is back at poll() in time");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for a free worker", e);
        }
        if (stopping) { // it waited for a worker while the shutdown began
            free.release();
            throw new WorkersStoppingException();
        }
        try {
            super.execute(() -> {
                try {
                    task.run();
                } finally {
                    // a step that continued on another thread (a Kafka producer's callback) took its MDC along, and
                    // the row's keys would tag this worker's next lines: each row starts without them
                    org.slf4j.MDC.clear();
                    free.release();
                }
            });
        } catch (RuntimeException e) {
            free.release();
            throw e;
        }
    }

    /** Rows being registered now. */
    public int busy() {
        return getMaximumPoolSize() - free.availablePermits();
    }

    private static java.util.concurrent.ThreadFactory threadFactory() {
        AtomicInteger n = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, "inbox-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
