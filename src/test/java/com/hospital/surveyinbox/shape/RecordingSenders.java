package com.hospital.surveyinbox.shape;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.support.ServiceClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The legacy system as the ingress sees it: senders that each hold their own transaction open until they are
 * answered, send a subject's SEND and, once it is acknowledged, its SUBMIT (round robin puts the two on
 * different pods), and send a message again when it was not acknowledged (a 503 says "please retry").
 * Every request and its answer is recorded for the {@link HistoryChecker}.
 */
final class RecordingSenders implements AutoCloseable {

    /** One request and its answer: status -1 when no HTTP answer came at all (connection refused or cut). */
    record Attempt(String subject, String msgType, long sentAt, long answeredAt, int status, String inboxId, String pod,
                   String error) {
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final String prefix;
    private final List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger subjects = new AtomicInteger();
    private final ExecutorService pool;
    private final List<Future<?>> senders = new ArrayList<>();

    /** Subjects each sender starts per second at most: a steady flow, not a flood that only measures the machine. */
    static final int SUBJECTS_PER_SECOND = 2;

    /** Exactly {@code subjects} SENDs (each until acknowledged), one after the other, then done: no other traffic. */
    static RecordingSenders exactly(int ingressPort, String prefix, int subjects) throws Exception {
        RecordingSenders senders = new RecordingSenders(prefix);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI reception = URI.create("http://127.0.0.1:" + ingressPort + "/legacy/survey-send-info");
        for (int i = 1; i <= subjects; i++) {
            senders.deliver(http, reception, prefix + i, "SEND", false);
        }
        senders.running.set(false);
        return senders;
    }

    private RecordingSenders(String prefix) {
        this.prefix = prefix;
        this.pool = Executors.newSingleThreadExecutor();
    }

    RecordingSenders(int ingressPort, String prefix, int count) {
        this.prefix = prefix;
        this.pool = Executors.newFixedThreadPool(count);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI reception = URI.create("http://127.0.0.1:" + ingressPort + "/legacy/survey-send-info");
        for (int i = 0; i < count; i++) {
            senders.add(pool.submit(() -> {
                while (running.get()) {
                    long next = System.nanoTime() + 1_000_000_000L / SUBJECTS_PER_SECOND;
                    int n = subjects.incrementAndGet();
                    String subject = prefix + n;
                    // every tenth subject's form is not registered: it fails, is retried, goes DEAD with one reply
                    boolean unregistered = unregistered(subject);
                    if (deliver(http, reception, subject, "SEND", unregistered) && !unregistered) {
                        deliver(http, reception, subject, "SUBMIT", false);
                    }
                    while (running.get() && System.nanoTime() < next) { // pacing, not a wait for a condition
                        java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
                    }
                }
                return null;
            }));
        }
    }

    /** Sends until acknowledged, as the legacy system does (at most 20 tries); true once acknowledged. */
    private boolean deliver(HttpClient http, URI reception, String subject, String msgType, boolean unregistered) {
        for (int attempt = 0; attempt < 20; attempt++) {
            String body = ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"" + msgType + "\"");
            if (unregistered) {
                body = body.replace("\"F100\"", "\"UNREG-SHAPE\"");
            }
            long sent = System.nanoTime();
            int status;
            String inboxId = null;
            String pod = null;
            String error = null;
            try {
                HttpResponse<String> answer = http.send(HttpRequest.newBuilder(reception)
                        .header("Authorization", ServiceClient.LEGACY_AUTH).header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
                        HttpResponse.BodyHandlers.ofString());
                status = answer.statusCode();
                pod = answer.headers().firstValue("X-Upstream").orElse(null);
                if (status == 200) {
                    inboxId = MAPPER.readTree(answer.body()).path("inboxId").asText(null);
                }
            } catch (IOException e) {
                status = -1;
                error = e.getClass().getSimpleName();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            attempts.add(new Attempt(subject, msgType, sent, System.nanoTime(), status, inboxId, pod, error));
            if (status == 200) {
                return true;
            }
            if (!running.get()) {
                return false;
            }
        }
        return false;
    }

    String prefix() {
        return prefix;
    }

    /**
     * Whether these senders sent this subject's SEND with a form the survey side does not know: every tenth of their
     * own subjects ({@code prefix + n}); a {@link PodWatch} subject ({@code prefix + "w" + pod + "-" + n}) never.
     */
    boolean unregistered(String subject) {
        String n = subject.startsWith(prefix) ? subject.substring(prefix.length()) : "";
        return !n.isEmpty() && n.chars().allMatch(c -> c >= '0' && c <= '9') && Long.parseLong(n) % 10 == 0;
    }

    /** A request another sender made (a {@link PodWatch} straight to a pod), checked with these senders' own. */
    void record(Attempt attempt) {
        attempts.add(attempt);
    }

    List<Attempt> attempts() {
        synchronized (attempts) {
            return new ArrayList<>(attempts);
        }
    }

    long acknowledged() {
        return attempts().stream().filter(a -> a.status() == 200).count();
    }

    /** Stops posting (each sender ends after its request under way); {@link #close()} waits for them. */
    void stop() {
        running.set(false);
    }

    /** Stops starting new subjects; a subject whose SEND was acknowledged still gets its SUBMIT. */
    @Override
    public void close() throws Exception {
        running.set(false);
        pool.shutdown();
        if (!pool.awaitTermination(120, TimeUnit.SECONDS)) {
            pool.shutdownNow();
        }
        for (Future<?> sender : senders) {
            sender.get();
        }
    }
}
