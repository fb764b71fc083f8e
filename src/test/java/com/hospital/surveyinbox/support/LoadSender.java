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
import java.util.concurrent.locks.LockSupport;

/**
 * Senders that keep POSTing new messages (as the legacy system would during a fault) until stopped,
 * recording every attempt, every answer and the acknowledged set (subject -> inboxId of each 200).
 * Each sender paces itself at {@link #PER_SENDER_PER_SECOND} (a hospital's feed, not a flood): unpaced, four
 * senders stored about 150 rows a second here, and each fault scenario then spent half a minute draining the
 * backlog of thousands its outage piled up, proving nothing more. A request slower than its slot (a frozen
 * database, a refused store) is followed at once by the next.
 */
public final class LoadSender implements AutoCloseable {

    /** One answer: when the request was sent, when it was answered (nanoTime), and the status. */
    public record Answer(long sentAt, long answeredAt, int status) {
    }

    public final Map<String, String> acknowledged = new ConcurrentHashMap<>();
    public final List<String> attempted = Collections.synchronizedList(new ArrayList<>());
    private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
    /** Requests per second per sender: four senders keep 40 receptions a second coming. */
    public static final int PER_SENDER_PER_SECOND = 10;

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ExecutorService pool;
    private final List<Future<?>> futures = new ArrayList<>();

    public LoadSender(ServiceClient client, String prefix, int senders) {
        AtomicInteger seq = new AtomicInteger();
        pool = Executors.newFixedThreadPool(senders);
        for (int t = 0; t < senders; t++) {
            futures.add(pool.submit(() -> {
                long interval = TimeUnit.SECONDS.toNanos(1) / PER_SENDER_PER_SECOND;
                long next = System.nanoTime();
                while (running.get()) {
                    // the pace of a feed: wait for this sender's next slot, never behind it
                    long now = System.nanoTime();
                    if (next > now) {
                        LockSupport.parkNanos(next - now);
                    }
                    next = Math.max(next, now) + interval;
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
