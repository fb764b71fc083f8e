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
 * moment it is handed over. Rows of one subject may now be handed to two workers at once; the claim's
 * ordering guard (an earlier unfinished row blocks it) keeps them in arrival order, and the finished row
 * republishes the held one (find-successor), as it did for the redelivery job's races.
 */
public final class ProcessingWorkers extends ThreadPoolExecutor {

    private final Semaphore free;

    public ProcessingWorkers(AdapterProperties properties, MeterRegistry meters) {
        this(properties.getKafka().getWorkers(), meters);
    }

    ProcessingWorkers(int workers, MeterRegistry meters) {
        super(workers, workers, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), threadFactory());
        this.free = new Semaphore(workers);
        prestartAllCoreThreads();
        Gauge.builder("adapter.processing.workers.busy", this, ProcessingWorkers::busy)
                .description("rows being registered now (of adapter.kafka.workers)").register(meters);
        Gauge.builder("adapter.processing.workers", this, ThreadPoolExecutor::getMaximumPoolSize)
                .description("workers that register rows (adapter.kafka.workers)").register(meters);
    }

    /** Runs the task on a free worker; waits (the caller is a consumer thread) until one is free. */
    @Override
    public void execute(Runnable task) {
        if (isShutdown()) {
            throw new RejectedExecutionException("processing workers stopped");
        }
        try {
            free.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for a free worker", e);
        }
        try {
            super.execute(() -> {
                try {
                    task.run();
                } finally {
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
