package com.hospital.surveyinbox.support;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Senders that keep POSTing new messages (as the legacy system would during a fault) until stopped,
 * recording every attempt, every answer and the acknowledged set (subject -> inboxId of each 200).
 */
public final class LoadSender implements AutoCloseable {

    /** One answer: when the request was sent, when it was answered (nanoTime), and the status. */
    public record Answer(long sentAt, long answeredAt, int status) {
    }

    public final Map<String, String> acknowledged = new ConcurrentHashMap<>();
    public final List<String> attempted = Collections.synchronizedList(new ArrayList<>());
    private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ExecutorService pool;
    private final List<Future<?>> futures = new ArrayList<>();

    public LoadSender(ServiceClient client, String prefix, int senders) {
        AtomicInteger seq = new AtomicInteger();
        pool = Executors.newFixedThreadPool(senders);
        for (int t = 0; t < senders; t++) {
            futures.add(pool.submit(() -> {
                while (running.get()) {
                    String subject = prefix + seq.incrementAndGet();
                    attempted.add(subject);
                    long sent = System.nanoTime();
                    ServiceClient.Reply reply = client.receive(ServiceClient.message(subject, ""));
                    answers.add(new Answer(sent, System.nanoTime(), reply.status()));
                    if (reply.status() == 200) {
                        acknowledged.put(subject, reply.json().get("inboxId").asText());
                    }
                }
                return null;
            }));
        }
    }

    /** A copy of the answers so far (the senders keep appending; iterating the live list would race them). */
    public List<Answer> answers() {
        synchronized (answers) {
            return new ArrayList<>(answers);
        }
    }

    /** Stops sending and waits for the requests in flight. */
    @Override
    public void close() throws Exception {
        running.set(false);
        for (Future<?> f : futures) {
            f.get(1, TimeUnit.MINUTES);
        }
        pool.shutdown();
    }
}
