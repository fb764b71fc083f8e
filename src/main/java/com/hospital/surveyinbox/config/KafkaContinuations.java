package com.hospital.surveyinbox.config;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.MDC;
import org.springframework.stereotype.Component;

/**
 * The threads a route goes on with after the Kafka producer acknowledged its event
 * ({@code camel.component.kafka.worker-pool: "#kafkaContinuations"}): the rest of a redelivery tick after its first
 * publish, a processing worker's route after it released a held successor. Each task starts and ends with an empty
 * MDC: Camel restores a traced route's {@code trace_id}/{@code span_id} on the thread that finishes it and leaves
 * them there, so the next route continued on that thread ("Inbox 7 DEAD", "Event of inbox 9 not published") was
 * logged under another row's trace. Sized as Camel's own pool for the producer (10 to 20 threads, 1,000 queued, the
 * caller runs the task beyond); Spring shuts it down after Camel stopped.
 */
@Component("kafkaContinuations")
public class KafkaContinuations extends ThreadPoolExecutor implements org.springframework.beans.factory.DisposableBean {

    public KafkaContinuations() {
        super(10, 20, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(1000), threads(), new CallerRunsPolicy());
    }

    private static ThreadFactory threads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "kafka-continuation-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public void destroy() {
        shutdown();
    }

    /** The task between two clearings of the MDC, on a pool thread or, beyond the queue, on the caller's. */
    @Override
    public void execute(Runnable task) {
        super.execute(() -> {
            MDC.clear();
            try {
                task.run();
            } finally {
                MDC.clear();
            }
        });
    }
}
