package com.hospital.surveyinbox.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A stateful stand-in for the three downstream systems of CONTRACT §3, served over real HTTP:
 * the legacy system ({@code /legacy}), the account service ({@code /account}) and the survey service
 * ({@code /survey}). It keeps state (guests, bundles by Idempotency-Key, submissions, replies) so resend
 * and submission behave as the contract says, counts every call, and takes injected faults.
 *
 * <p>Conventions: {@code formCd} starting {@code UNREG} -> 422 FORM_NOT_REGISTERED; {@code groupCd}
 * starting {@code NOGRP} -> 422 GROUP_NOT_FOUND; {@code srvyNo} starting {@code NOCFG} -> consent 404;
 * {@code srvyNo} starting {@code CONSENT} -> a one-element consent list (otherwise {@code []});
 * {@code patno} starting {@code NOPAT} -> patient 404.
 */
public final class DownstreamSimulator {

    /** Latency ranges in milliseconds. */
    public record Latency(int consentMin, int consentMax, int patientMin, int patientMax, int otherMin, int otherMax) {
        /** The case-study latency model (consent 760–984 ms, patient 50–150 ms, others 20–100 ms). */
        public static final Latency REALISTIC = new Latency(760, 984, 50, 150, 20, 100);
        public static final Latency FAST = new Latency(0, 2, 0, 2, 0, 2);
    }

    /**
     * A forced answer for requests whose "METHOD path" matches: after {@code delayMillis}, with these headers (over
     * the default {@code Content-Type: application/json}), its body written a byte every {@code dripMillis} (0: at once);
     * only for requests whose body (as UTF-8; for a request without a body, its raw query) satisfies {@code requestBody}
     * (e.g. the reply of one subject: every reply shares one path, and a row of another test may owe one; a guest search
     * for one patno: every search shares one path).
     */
    public record Fault(Predicate<String> matches, int status, String body, long delayMillis, Map<String, String> headers,
                        long dripMillis, Predicate<String> requestBody) {
        public Fault(Predicate<String> matches, int status, String body, long delayMillis, Map<String, String> headers,
                     long dripMillis) {
            this(matches, status, body, delayMillis, headers, dripMillis, any -> true);
        }

        public Fault(Predicate<String> matches, int status, String body, long delayMillis) {
            this(matches, status, body, delayMillis, Map.of(), 0);
        }
    }

    /** One request as received: its line (method, raw path and query) and its headers. */
    public record Request(String line, Map<String, List<String>> headers) {

        /** The first value of a header, whatever the case of its name; null when absent. */
        public String header(String name) {
            return headers.entrySet().stream().filter(h -> h.getKey().equalsIgnoreCase(name))
                    .map(h -> h.getValue().get(0)).findFirst().orElse(null);
        }
    }

    /** Something that happened downstream, in arrival order. */
    public record Event(long seq, String kind, String key) {
    }

    static {
        // without TCP_NODELAY the JDK server's small writes meet the client's delayed ACKs: +40 ms per call
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private final ObjectMapper mapper = new ObjectMapper();
    private final HttpServer server;
    /** Threads named {@link #THREAD_PREFIX}: the benchmark counts their CPU apart from the service's. */
    public static final String THREAD_PREFIX = "downstream-sim-";
    private final java.util.concurrent.atomic.AtomicInteger threadSeq = new java.util.concurrent.atomic.AtomicInteger();
    private final ExecutorService executor = Executors.newFixedThreadPool(200,
            r -> new Thread(r, THREAD_PREFIX + threadSeq.incrementAndGet()));
    private volatile Latency latency = Latency.FAST;
    private final java.util.concurrent.atomic.LongAdder simulatedMillis = new java.util.concurrent.atomic.LongAdder();
    private final List<Fault> faults = new CopyOnWriteArrayList<>();

    private final Map<String, String> guests = new ConcurrentHashMap<>();
    private final Map<String, String> bundles = new ConcurrentHashMap<>();
    private final Map<String, Boolean> submitted = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> bundleCreates = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> consentLookups = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final List<JsonNode> bundleRequests = new CopyOnWriteArrayList<>();
    private final List<JsonNode> replies = new CopyOnWriteArrayList<>();
    private final List<Map<String, List<String>>> requestHeaders = new CopyOnWriteArrayList<>();
    /** Every request line as sent: method, raw path and raw query ("GET /legacy/patients/P%201?x=1"). */
    private final List<String> requestLines = new CopyOnWriteArrayList<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final AtomicLong seq = new AtomicLong();
    private final AtomicLong ids = new AtomicLong(1000);
    /** Opened by {@link #stop()}: a simulated latency waits for it, at most its own length. */
    private final java.util.concurrent.CountDownLatch stopping = new java.util.concurrent.CountDownLatch(1);

    public DownstreamSimulator(int port) {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 512);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public void stop() {
        stopping.countDown(); // calls still inside their simulated latency answer now
        server.stop(0);
        if (tlsServer != null) {
            tlsServer.stop(0);
        }
        executor.shutdownNow();
    }

    private volatile com.sun.net.httpserver.HttpsServer tlsServer;
    private final AtomicInteger tlsRequests = new AtomicInteger();

    /**
     * The same downstreams over TLS as well, on a port of their own, with {@code context}'s certificate: answers as
     * over plain HTTP. Returns the TLS port.
     */
    public synchronized int serveTls(javax.net.ssl.SSLContext context) {
        if (tlsServer == null) {
            try {
                tlsServer = com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            tlsServer.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(context));
            tlsServer.setExecutor(executor);
            tlsServer.createContext("/", this::handle);
            tlsServer.start();
        }
        return tlsServer.getAddress().getPort();
    }

    /** Requests answered over TLS ({@link #serveTls}). */
    public int tlsRequests() {
        return tlsRequests.get();
    }

    public void setLatency(Latency latency) {
        this.latency = latency;
    }

    public Latency latency() {
        return latency;
    }

    /** Adds a fault for requests whose "METHOD path" (path without the query) starts with {@code prefix}. */
    public Fault failWhen(String methodAndPathPrefix, int status, String body) {
        Fault fault = new Fault(s -> s.startsWith(methodAndPathPrefix), status, body, 0);
        faults.add(fault);
        return fault;
    }

    public Fault add(Fault fault) {
        faults.add(fault);
        return fault;
    }

    public void remove(Fault fault) {
        faults.remove(fault);
    }

    public void clearFaults() {
        faults.clear();
    }

    // ----- observations -----

    /**
     * Bundles created for the subject: 0 or 1, as the survey side keys the create by its Idempotency-Key (a repeat is
     * answered with the first dispatch and creates nothing). A registration run twice shows in {@link #events} (a
     * second SUBMISSION or RESEND) and in {@link #bundleRequests}, not here.
     */
    public int bundleCreates(String srvyDrawupNo) {
        AtomicInteger n = bundleCreates.get(srvyDrawupNo);
        return n == null ? 0 : n.get();
    }

    public int consentLookups(String srvyNo) {
        AtomicInteger n = consentLookups.get(srvyNo);
        return n == null ? 0 : n.get();
    }

    public int totalConsentLookups() {
        return consentLookups.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    public int calls(String kind) {
        AtomicInteger n = calls.get(kind);
        return n == null ? 0 : n.get();
    }

    public boolean hasBundle(String srvyDrawupNo) {
        return bundles.containsKey(srvyDrawupNo);
    }

    public List<JsonNode> bundleRequests(String srvyDrawupNo) {
        return bundleRequests.stream().filter(b -> srvyDrawupNo.equals(b.path("srvyDrawupNo").asText())).toList();
    }

    public List<JsonNode> replies() {
        return new ArrayList<>(replies);
    }

    /** The guest account of a patient number, or null when none was created. */
    public String guestOf(String patno) {
        return guests.get(patno);
    }

    public List<JsonNode> replies(String srvyDrawupNo) {
        return replies.stream().filter(r -> srvyDrawupNo.equals(r.path("srvyDrawupNo").asText())).toList();
    }

    public List<Event> events(String key) {
        return events.stream().filter(e -> e.key().equals(key)).toList();
    }

    /** Every request line received, in order: method, raw path and raw query. */
    public List<String> requestLines() {
        return new ArrayList<>(requestLines);
    }

    /** Every request received, in order, with its headers. */
    public List<Request> requests() {
        return new ArrayList<>(requests);
    }

    public List<Map<String, List<String>>> requestHeaders() {
        return new ArrayList<>(requestHeaders);
    }

    public Map<String, Object> stats() {
        Map<String, Object> stats = new LinkedHashMap<>();
        Map<String, Integer> callCounts = new LinkedHashMap<>();
        calls.forEach((k, v) -> callCounts.put(k, v.get()));
        stats.put("calls", callCounts);
        stats.put("bundles", bundles.size());
        stats.put("submittedMoreThanOnce", events.stream().filter(e -> e.kind().equals("SUBMISSION"))
                .collect(java.util.stream.Collectors.groupingBy(Event::key, java.util.stream.Collectors.counting()))
                .values().stream().filter(n -> n > 1).count());
        stats.put("consentLookups", totalConsentLookups());
        Map<String, Integer> perSurvey = new LinkedHashMap<>();
        consentLookups.forEach((k, v) -> perSurvey.put(k, v.get()));
        stats.put("consentLookupsPerSurvey", perSurvey);
        stats.put("replies", replies.size());
        return stats;
    }

    // ----- HTTP -----

    private void handle(HttpExchange http) throws IOException {
        if (http instanceof com.sun.net.httpserver.HttpsExchange) {
            tlsRequests.incrementAndGet();
        }
        try (http) {
            String method = http.getRequestMethod();
            String path = http.getRequestURI().getRawPath();
            String query = http.getRequestURI().getRawQuery();
            byte[] requestBody = http.getRequestBody().readAllBytes();
            requestHeaders.add(Map.copyOf(http.getRequestHeaders()));
            requestLines.add(method + " " + path + (query == null ? "" : "?" + query));
            requests.add(new Request(method + " " + path + (query == null ? "" : "?" + query),
                    Map.copyOf(http.getRequestHeaders())));
            String key = method + " " + path;
            for (Fault fault : path.startsWith("/_sim/") ? List.<Fault>of() : faults) {
                if (fault.matches().test(key) && fault.requestBody().test(requestBody.length == 0 && query != null
                        ? query : new String(requestBody, java.nio.charset.StandardCharsets.UTF_8))) {
                    count("fault");
                    sleep(fault.delayMillis());
                    send(http, fault.status(), fault.body(), fault.headers(), fault.dripMillis());
                    return;
                }
            }
            Response response = route(method, path, query, requestBody, http);
            send(http, response.status, response.body);
        } catch (RuntimeException e) {
            send(http, 500, "{\"code\":\"SIM_ERROR\",\"message\":\"simulator error\"}");
        }
    }

    private record Response(int status, String body) {
    }

    private Response route(String method, String path, String query, byte[] body, HttpExchange http) throws IOException {
        String[] p = path.split("/");
        // p[0] = "" ; p[1] = system
        if (path.equals("/_sim/stats") && method.equals("GET")) {
            return new Response(200, mapper.writeValueAsString(stats()));
        }
        // fault injection for the local run: POST /_sim/faults?match=GET%20/legacy/patients/&status=503 ; DELETE clears
        if (path.equals("/_sim/faults") && method.equals("POST")) {
            String match = queryParam(query, "match");
            int status = Integer.parseInt(queryParam(query, "status") == null ? "503" : queryParam(query, "status"));
            failWhen(match == null ? "" : match, status, "{\"code\":\"SIMULATED\",\"message\":\"simulated failure\"}");
            return new Response(201, "{\"faults\":" + faults.size() + "}");
        }
        if (path.equals("/_sim/faults") && method.equals("DELETE")) {
            clearFaults();
            return new Response(200, "{\"faults\":0}");
        }
        if (p.length >= 2 && p[1].equals("legacy")) {
            if (method.equals("GET") && p.length == 5 && p[2].equals("surveys") && p[4].equals("consents")) {
                String srvyNo = decode(p[3]);
                count("legacy-consents");
                event("CONSENTS", srvyNo);
                consentLookups.computeIfAbsent(srvyNo, k -> new AtomicInteger()).incrementAndGet();
                delay(latency.consentMin(), latency.consentMax());
                if (srvyNo.startsWith("NOCFG")) {
                    return new Response(404, "{\"code\":\"SURVEY_NOT_CONFIGURED\",\"message\":\"survey not configured\"}");
                }
                if (srvyNo.startsWith("CONSENT")) {
                    return new Response(200, "[{\"consentCd\":\"C1\",\"title\":\"Consent for " + srvyNo + "\"}]");
                }
                return new Response(200, "[]");
            }
            if (method.equals("GET") && p.length == 4 && p[2].equals("patients")) {
                String patno = decode(p[3]);
                count("legacy-patient");
                event("PATIENT", patno);
                delay(latency.patientMin(), latency.patientMax());
                if (patno.startsWith("NOPAT")) {
                    return new Response(404, "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient not found\"}");
                }
                Map<String, Object> patient = new LinkedHashMap<>();
                patient.put("patno", patno);
                patient.put("patNm", "Patient-" + patno);
                patient.put("mobileNo", "010-0000-" + String.format("%04d", Math.abs(patno.hashCode()) % 10000));
                return new Response(200, mapper.writeValueAsString(patient));
            }
            if (method.equals("POST") && path.equals("/legacy/survey-send-results")) {
                count("legacy-reply");
                delay(latency.otherMin(), latency.otherMax());
                JsonNode reply = mapper.readTree(body);
                replies.add(reply);
                event("REPLY", reply.path("srvyDrawupNo").asText());
                return new Response(200, "{\"resultCode\":\"Y\"}");
            }
        }
        if (p.length >= 3 && p[1].equals("account") && p[2].equals("guests")) {
            delay(latency.otherMin(), latency.otherMax());
            if (method.equals("GET")) {
                count("account-guest-find");
                String patno = queryParam(query, "patno");
                String guestId = patno == null ? null : guests.get(patno);
                return guestId == null
                        ? new Response(404, "{\"code\":\"GUEST_NOT_FOUND\",\"message\":\"guest not found\"}")
                        : new Response(200, "{\"guestId\":\"" + guestId + "\"}");
            }
            if (method.equals("POST")) {
                count("account-guest-create");
                JsonNode guest = mapper.readTree(body);
                event("GUEST_CREATE", guest.path("patno").asText() + "|" + guest.path("patNm").asText());
                String patno = guest.path("patno").asText();
                String fresh = "G" + ids.incrementAndGet();
                String existing = guests.putIfAbsent(patno, fresh);
                return existing == null
                        ? new Response(201, "{\"guestId\":\"" + fresh + "\"}")
                        : new Response(409, "{\"guestId\":\"" + existing + "\"}");
            }
        }
        // GET {survey}/forms/{formCd}: not a registration step of CONTRACT §3; the route-edit recipes add it
        if (method.equals("GET") && p.length == 4 && p[1].equals("survey") && p[2].equals("forms")) {
            String formCd = decode(p[3]);
            count("survey-form");
            event("FORM", formCd);
            return formCd.startsWith("NOFORM")
                    ? new Response(404, "{\"code\":\"FORM_NOT_FOUND\",\"message\":\"form " + formCd + " does not exist\"}")
                    : new Response(200, "{\"formCd\":\"" + formCd + "\",\"active\":true}");
        }
        if (p.length >= 3 && p[1].equals("survey") && p[2].equals("dispatch-bundles")) {
            delay(latency.otherMin(), latency.otherMax());
            if (method.equals("POST") && p.length == 3) {
                count("survey-bundle");
                // CONTRACT §3: the key is the srvyDrawupNo, percent-encoded as UTF-8 when it is not printable ASCII
                String rawKey = http.getRequestHeaders().getFirst("Idempotency-Key");
                String key = rawKey == null ? null : decode(rawKey.replace("+", "%2B"));
                JsonNode bundle = mapper.readTree(body);
                bundleRequests.add(bundle);
                String formCd = bundle.path("formCd").asText();
                if (formCd.startsWith("UNREG")) {
                    return new Response(422, "{\"code\":\"FORM_NOT_REGISTERED\",\"message\":\"form " + formCd + " is not registered\"}");
                }
                if (bundle.path("groupCd").asText().startsWith("NOGRP")) {
                    return new Response(422, "{\"code\":\"GROUP_NOT_FOUND\",\"message\":\"group not found\"}");
                }
                if (key == null || key.isBlank()) {
                    return new Response(400, "{\"code\":\"IDEMPOTENCY_KEY_REQUIRED\",\"message\":\"Idempotency-Key required\"}");
                }
                if (!key.equals(bundle.path("srvyDrawupNo").asText())) {
                    count("survey-bundle-key-mismatch");
                    return new Response(400, "{\"code\":\"IDEMPOTENCY_KEY_MISMATCH\",\"message\":\"Idempotency-Key is not the srvyDrawupNo\"}");
                }
                synchronized (bundles) {
                    String existing = bundles.get(key);
                    if (existing != null) {
                        return new Response(200, "{\"dispatchId\":\"" + existing + "\"}");
                    }
                    String dispatchId = "D" + ids.incrementAndGet();
                    bundles.put(key, dispatchId);
                    bundleCreates.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                    event("BUNDLE", key);
                    return new Response(201, "{\"dispatchId\":\"" + dispatchId + "\"}");
                }
            }
            if (method.equals("POST") && p.length == 5) {
                String key = decode(p[3]);
                if (p[4].equals("resend")) {
                    count("survey-resend");
                    if (!bundles.containsKey(key)) {
                        // recorded: a submission that came before its dispatch (the ordering guard failed), whatever
                        // the service stores of the answer (its text may be masked or withheld)
                        event("SUBMISSION_WITHOUT_BUNDLE", key);
                        return new Response(404, "{\"code\":\"BUNDLE_NOT_FOUND\",\"message\":\"no dispatch for this number\"}");
                    }
                    if (submitted.getOrDefault(key, false)) {
                        return new Response(409, "{\"code\":\"ALREADY_SUBMITTED\",\"message\":\"questionnaire already submitted\"}");
                    }
                    event("RESEND", key);
                    return new Response(200, "{\"resent\":true}");
                }
                if (p[4].equals("submission")) {
                    count("survey-submission");
                    if (!bundles.containsKey(key)) {
                        // recorded: a submission that came before its dispatch (the ordering guard failed), whatever
                        // the service stores of the answer (its text may be masked or withheld)
                        event("SUBMISSION_WITHOUT_BUNDLE", key);
                        return new Response(404, "{\"code\":\"BUNDLE_NOT_FOUND\",\"message\":\"no dispatch for this number\"}");
                    }
                    submitted.put(key, true);
                    event("SUBMISSION", key);
                    return new Response(200, "{\"submitted\":true}");
                }
            }
        }
        return new Response(404, "{\"code\":\"NO_ROUTE\",\"message\":\"no such simulated API\"}");
    }

    private void event(String kind, String key) {
        events.add(new Event(seq.incrementAndGet(), kind, key));
    }

    private void count(String kind) {
        calls.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    }

    private void delay(int min, int max) {
        int millis = max <= min ? min : ThreadLocalRandom.current().nextInt(min, max + 1);
        simulatedMillis.add(millis);
        sleep(millis);
    }

    /** Milliseconds of latency the model has imposed so far, summed over every call (the benchmark's lower bound). */
    public long simulatedMillis() {
        return simulatedMillis.sum();
    }

    /**
     * The simulated latency: the call waits for the simulator to stop, with the latency as its deadline (so a
     * stopping simulator does not hold its callers for the rest of their latency).
     */
    private void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            stopping.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static String queryParam(String query, String name) {
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && decode(pair.substring(0, eq)).equals(name)) {
                return decode(pair.substring(eq + 1));
            }
        }
        return null;
    }

    private void send(HttpExchange http, int status, String body) throws IOException {
        send(http, status, body, Map.of(), 0);
    }

    private void send(HttpExchange http, int status, String body, Map<String, String> headers, long dripMillis)
            throws IOException {
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if ("gzip".equalsIgnoreCase(headers.get("Content-Encoding"))) { // a fault's compressed answer
            java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
            try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(zipped)) {
                gzip.write(bytes);
            }
            bytes = zipped.toByteArray();
        }
        http.getResponseHeaders().set("Content-Type", "application/json");
        headers.forEach((name, value) -> http.getResponseHeaders().set(name, value));
        http.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = http.getResponseBody()) {
                if (dripMillis <= 0) {
                    out.write(bytes);
                    return;
                }
                for (byte b : bytes) { // a byte at a time, each well within the client's read timeout
                    out.write(b);
                    out.flush();
                    sleep(dripMillis);
                }
            } catch (IOException closedByTheClient) {
                // the client gave up on the answer: what this fault is for
            }
        }
    }
}
