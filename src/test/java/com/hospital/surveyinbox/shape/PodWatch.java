package com.hospital.surveyinbox.shape;

import com.hospital.surveyinbox.support.ServiceClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * What a sender that reaches a pod directly is answered while it starts (from the JVM's start until well after it
 * is ready) or stops (from SIGTERM until its JVM has gone): every 100 ms the readiness probe, then a POST of a
 * message without its required fields (a 400 while the reception runs; nothing is ever stored). Tomcat takes
 * connections seconds before Camel has started the reception route: a POST in that window must be told "nothing
 * stored, retry" (503), never a 404 a sender could take for "this endpoint does not exist", and a pod must not
 * report ready before the reception runs. At shutdown Tomcat closes its port before Camel stops the route. The
 * same tick an operator reads the inbox list (a route too): 503 JSON "service is starting" in that window, never
 * a 404 an operator could take for "nothing there". Given the scenario's senders, the same tick also POSTs a valid
 * message of a subject of its own straight to the pod (a late request the ingress still routed there, as Kubernetes'
 * endpoint removal races the SIGTERM): recorded with the senders' requests, so the {@link HistoryChecker} proves that
 * one answered 200 is stored and registered and one refused stored nothing, whatever instant of the start or the
 * stop it met.
 */
final class PodWatch implements AutoCloseable {

    /** One POST: whether the readiness probe had answered 200 before it was sent, and its status (-1: no answer). */
    record Answer(boolean readyBefore, int status, String body) {
        /** The connection was refused: nothing listens on the port (any other failure may be a slow moment). */
        boolean refused() {
            return status == -1 && "ConnectException".equals(body);
        }
    }

    private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
    private final List<Answer> opsAnswers = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    PodWatch(ServicePod pod) {
        this(pod, null);
    }

    PodWatch(ServicePod pod, RecordingSenders senders) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + pod.managementPort + "/actuator/health/readiness"))
                .timeout(Duration.ofSeconds(5)).build();
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + pod.port + "/legacy/survey-send-info"))
                .header("Authorization", ServiceClient.LEGACY_AUTH).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("{\"formCd\":\"F100\"}")).build();
        HttpRequest read = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + pod.port + "/ops/inbox?limit=1"))
                .header("Authorization", ServiceClient.OPS_AUTH).timeout(Duration.ofSeconds(10)).build();
        thread = new Thread(() -> {
            boolean ready = false;
            int sent = 0;
            while (running.get()) {
                long next = System.nanoTime() + 100_000_000L;
                try {
                    ready = ready || http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    // not listening yet: not ready
                } catch (InterruptedException e) {
                    return;
                }
                int status;
                String body;
                try {
                    HttpResponse<String> answer = http.send(post, HttpResponse.BodyHandlers.ofString());
                    status = answer.statusCode();
                    body = answer.body();
                } catch (IOException e) {
                    status = -1;
                    body = e.getClass().getSimpleName();
                } catch (InterruptedException e) {
                    return;
                }
                answers.add(new Answer(ready, status, body));
                opsAnswers.add(send(http, read, ready));
                if (senders != null) {
                    deliver(http, pod, senders, ++sent);
                }
                LockSupport.parkNanos(Math.max(0, next - System.nanoTime())); // pacing, not a wait for a condition
            }
        }, "pod-watch-" + pod.name);
        thread.setDaemon(true);
        thread.start();
    }

    /** One valid SEND of a subject of its own, straight to the pod, recorded as one of the senders' requests. */
    private static void deliver(HttpClient http, ServicePod pod, RecordingSenders senders, int n) {
        String subject = senders.prefix() + "w" + pod.name + "-" + n;
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + pod.port + "/legacy/survey-send-info"))
                .header("Authorization", ServiceClient.LEGACY_AUTH).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(
                        ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"SEND\""))).build();
        long sentAt = System.nanoTime();
        int status;
        String inboxId = null;
        String error = null;
        try {
            HttpResponse<String> answer = http.send(post, HttpResponse.BodyHandlers.ofString());
            status = answer.statusCode();
            if (status == 200) {
                inboxId = new com.fasterxml.jackson.databind.ObjectMapper().readTree(answer.body()).path("inboxId").asText(null);
            }
        } catch (IOException e) {
            status = -1;
            error = e.getClass().getSimpleName();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        senders.record(new RecordingSenders.Attempt(subject, "SEND", sentAt, System.nanoTime(), status, inboxId,
                "direct " + "127.0.0.1:" + pod.port, error)); // not through the ingress: never counted as routed there
    }

    /** One request's answer; -1 and the exception's name when there was none. */
    private static Answer send(HttpClient http, HttpRequest request, boolean ready) {
        try {
            HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
            return new Answer(ready, answer.statusCode(), answer.body());
        } catch (IOException e) {
            return new Answer(ready, -1, e.getClass().getSimpleName());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(ready, -1, "InterruptedException");
        }
    }

    /** The operator's reads, one per tick. */
    List<Answer> opsAnswers() {
        synchronized (opsAnswers) {
            return new ArrayList<>(opsAnswers);
        }
    }

    List<Answer> answers() {
        synchronized (answers) {
            return new ArrayList<>(answers);
        }
    }

    /** POSTs sent after the readiness probe had answered 200. */
    long afterReady() {
        return answers().stream().filter(Answer::readyBefore).count();
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        thread.join(20_000);
    }
}
