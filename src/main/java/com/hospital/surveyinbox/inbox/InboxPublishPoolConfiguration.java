package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The pool of the event wire taps ({@code executorService: inboxPublishPool}): a reception's
 * ({@code routes/inbox-receive.camel.yaml}, step {@code inbox-receive-publish}), a single requeue's
 * ({@code inbox-requeue-send-event}) and the row a synchronous lease held back ({@code inbox-receive-republish-held-row}). Camel's default pool runs a
 * task on the caller when it is full, which would make a reception wait on Kafka (a broker outage, or
 * metadata unavailable blocks a send up to {@code max.block.ms}). Here a full pool drops the event: the
 * row is committed and RECEIVED, and the redelivery job republishes it after {@code lost-event-after}.
 */
@Configuration(proxyBeanMethods = false)
public class InboxPublishPoolConfiguration {

    private static final Logger log = LoggerFactory.getLogger(InboxPublishPoolConfiguration.class);

    @Bean(name = "inboxPublishPool", destroyMethod = "shutdown")
    ExecutorService inboxPublishPool(AdapterProperties properties, MeterRegistry meters) {
        AdapterProperties.Kafka kafka = properties.getKafka();
        Counter dropped = Counter.builder("adapter.inbox.publish.dropped")
                .description("events not published at once (pool full: a reception's, a requeue's, a row a synchronous"
                        + " lease held back); the redelivery job republishes their rows")
                .register(meters);
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(kafka.getPublishThreads(), kafka.getPublishThreads(), 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(kafka.getPublishQueue()),
                task -> {
                    Thread t = new Thread(task, "inbox-publish-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                (task, pool) -> {
                    dropped.increment();
                    // WARN: a broker slower than the receptions for as long as the queue lasts (or a burst beyond
                    // it) is otherwise seen only when the backlog alert fires; RepeatedLogLines caps the lines
                    log.warn("Publish pool full ({} events waiting): an event is left to the redelivery job,"
                            + " which republishes its row after lost-event-after", pool.getQueue().size());
                }) {
            // Camel leaves a traced exchange's trace_id/span_id on the thread that finishes it (KafkaContinuations):
            // a publish that fails on this thread would label the next event's lines with another message's trace
            @Override
            protected void beforeExecute(Thread thread, Runnable task) {
                org.slf4j.MDC.clear();
            }

            @Override
            protected void afterExecute(Runnable task, Throwable failure) {
                org.slf4j.MDC.clear();
            }
        };
    }
}
