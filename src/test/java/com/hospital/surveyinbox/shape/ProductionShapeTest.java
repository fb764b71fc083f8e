package com.hospital.surveyinbox.shape;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.ClaimsInLog;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.FreezableTcpProxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The production shape: two service JVMs (pods; three after the scale-out) behind a real reverse proxy (nginx, as an ingress), sharing
 * one PostgreSQL (reached through a proxy that can make it slow), one Kafka broker, one Redis and the
 * downstream simulator. Senders reach the service through the ingress only, and after each scenario the
 * {@link HistoryChecker} proves from the senders' records, the database and the simulator's log that every
 * promise held. The pods keep their state between scenarios, as a deployment does.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProductionShapeTest {

    /**
     * preStop's 15 s stands for the ingress's reload here, awaited until nginx sent its last request (the requests a
     * slower ingress still routes to the pod are the {@link PodWatch}'s, straight to it); web 10 s + Camel 10 s
     * here, so 25 s.
     */
    static final Duration GRACE = Duration.ofSeconds(25);
    static final int MAX_ATTEMPTS = 3;
    static final String RUN = "shape" + UUID.randomUUID().toString().substring(0, 6);

    static EmbeddedServices services;
    static DownstreamSimulator simulator;
    static FreezableTcpProxy database;
    static JdbcTemplate jdbc;
    static Nginx ingress;
    static final List<ServicePod> pods = new ArrayList<>();
    /** Every pod ever started, ready or not: none outlives the class (a leftover would take later tests' CPU). */
    static final List<ServicePod> everyPod = new ArrayList<>();
    static int started;

    @BeforeAll
    static void startTheCluster() throws Exception {
        services = EmbeddedServices.get();
        simulator = services.simulator();
        database = new FreezableTcpProxy(services.postgresPort());
        jdbc = new JdbcTemplate(services.dataSource());
        List<ServicePod> first = new ArrayList<>();
        // two, not three: each pod replaced in the rolling update costs a start under load (40-80 s on two cores)
        for (int i = 0; i < 2; i++) {
            first.add(startPod());
        }
        for (ServicePod pod : first) {
            pods.add(pod.awaitReady(Duration.ofSeconds(180)));
        }
        ingress = Nginx.start(ports());
    }

    @AfterAll
    static void stopTheCluster() throws Exception {
        if (ingress != null) {
            ingress.close();
        }
        for (ServicePod pod : pods) {
            pod.terminate(GRACE);
        }
        everyPod.forEach(ServicePod::close);
        if (database != null) {
            database.close();
        }
        simulator.setLatency(DownstreamSimulator.Latency.FAST);
    }

    static ServicePod startPod() {
        Map<String, String> p = new LinkedHashMap<>();
        services.properties().forEach((k, v) -> p.put(k, String.valueOf(v)));
        p.put("spring.datasource.url", "jdbc:postgresql://localhost:" + database.port() + "/" + EmbeddedServices.DB_NAME);
        p.put("adapter.security.legacy.username", "legacy");
        p.put("adapter.security.legacy.password", "legacy-test-secret");
        p.put("adapter.security.ops.username", "ops");
        p.put("adapter.security.ops.password", "ops-test-secret");
        p.put("adapter.security.trusted-proxies", Nginx.ADDRESS + "/32");
        // a small failed-authentication burst, so the forged-address scenario sees the guesser limited in 45 guesses
        p.put("adapter.security.auth-failures.burst", "5");
        p.put("adapter.security.auth-failures.per-minute", "5");
        p.put("adapter.kafka.topic", RUN);
        p.put("adapter.kafka.group-id", RUN);
        p.put("adapter.kafka.partitions", "12");
        p.put("adapter.kafka.consumers", "4");
        p.put("adapter.kafka.workers", "8");
        p.put("spring.datasource.hikari.maximum-pool-size", "12");
        p.put("spring.quartz.scheduler-name", RUN);
        p.put("adapter.inbox.redeliver-cron", "0/2 * * * * ?");
        p.put("adapter.inbox.retry-delay", "PT2S");
        // 3 attempts, not 5: each scenario's unregistered subjects (and the poison rows) go DEAD two rounds sooner
        p.put("adapter.inbox.max-attempts", Integer.toString(MAX_ATTEMPTS));
        p.put("adapter.inbox.lost-event-after", "PT6S");
        p.put("adapter.inbox.stuck-processing-after", "PT40S");
        p.put("adapter.retention.enabled", "false");
        // payloads sealed as in production: a row one pod stored is opened by whichever pod claims it
        p.put("adapter.crypto.enabled", "true");
        p.put("adapter.crypto.active-key", "shape");
        p.put("adapter.crypto.keys.shape", "QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=");
        // an open circuit waits 3 s (not 30) before its trials, so the poison-row scenario runs in seconds
        p.put("adapter.circuit.open-duration", "PT3S");
        p.put("adapter.http.response-timeout", "PT6S");
        // 20 s instead of 5 min, so the slow-downstream scenario could push a consumer past it: with 4.5 s lookups a
        // consumer holding 10 records and waiting for a worker for each would be away from poll() for longer
        p.put("adapter.kafka.max-poll-interval-ms", "20000");
        p.put("spring.lifecycle.timeout-per-shutdown-phase", "10s");
        p.put("camel.main.shutdown-timeout", "10");
        p.put("logging.level.org.apache.kafka", "WARN");
        ServicePod pod = ServicePod.start("pod" + (++started), p);
        everyPod.add(pod);
        return pod;
    }

    static List<Integer> ports() {
        return pods.stream().map(p -> p.port).toList();
    }

    /**
     * Takes a pod out as Kubernetes does: out of the endpoints (ingress reload, its requests drain), then SIGTERM.
     * Meanwhile a {@link PodWatch} POSTs to it directly: Boot's web server stops in an earlier lifecycle phase than
     * Camel's context, so the pod answers through the reception route (400) until its port closes, never a 404 of
     * a Tomcat whose routes are gone (a 503 of Tomcat's own, a request read as its connector pauses, is allowed).
     */
    static void stop(ServicePod pod, RecordingSenders senders) throws InterruptedException {
        pods.remove(pod);
        ingress.route(ports());
        List<PodWatch.Answer> answers;
        List<PodWatch.Answer> opsAnswers;
        try (PodWatch watch = new PodWatch(pod, senders)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.answers().size() >= 3);
            // told to stop while it registers rows (claimed since it left the endpoints, not finished), as in
            // production: else "no attempt abandoned" would prove nothing about this stop
            int from = pod.log().length();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> !ClaimsInLog.unfinished(pod.log().substring(from)).isEmpty());
            assertThat(pod.terminate(GRACE)).as("pod " + pod.name + " stopped within its grace period:\n" + pod.tail()).isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> watch.answers().stream().anyMatch(PodWatch.Answer::refused));
            answers = watch.answers();
            opsAnswers = watch.opsAnswers();
        }
        System.out.println("[shape] " + pod.name + " while stopping answered " + answers.stream()
                .collect(java.util.stream.Collectors.groupingBy(PodWatch.Answer::status, java.util.TreeMap::new,
                        java.util.stream.Collectors.counting())));
        assertThat(answers.stream().filter(a -> a.status() != -1 && a.status() != 503 && a.status() != 400).toList())
                .as("answers of stopping " + pod.name + " to a POST without its required fields").isEmpty();
        // the route answered until the port closed: no answer at all after the first refused connection (a
        // timeout or a reset before it is no sign of a closed port)
        int closed = answers.stream().map(PodWatch.Answer::refused).toList().indexOf(true);
        assertThat(closed).as(pod.name + " closed its port while being watched").isPositive();
        assertThat(answers.subList(closed, answers.size())).as(pod.name + " answers after its port closed")
                .allSatisfy(a -> assertThat(a.status()).isEqualTo(-1));
        assertThat(opsAnswers.stream().filter(a -> a.status() != -1 && a.status() != 503 && a.status() != 200).toList())
                .as("answers of stopping " + pod.name + " to an operator's read").isEmpty();
    }

    /**
     * Adds a pod as a rollout or a scale-out does: started, ready, then into the endpoints. Meanwhile a
     * {@link PodWatch} POSTs to it directly: before the reception route runs it must answer 503 "nothing
     * stored, retry" (or not at all), never 404, and once the readiness probe says 200 every POST reaches the route.
     */
    static ServicePod add(RecordingSenders senders) throws InterruptedException {
        ServicePod pod = startPod();
        List<PodWatch.Answer> answers;
        List<PodWatch.Answer> opsAnswers;
        try (PodWatch watch = new PodWatch(pod, senders)) {
            pod.awaitReady(Duration.ofSeconds(180));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.afterReady() >= 3);
            answers = watch.answers();
            opsAnswers = watch.opsAnswers();
        }
        // before readiness: no answer yet, the 503 "starting", or already the route's answer; after it, the route's.
        // The window was seen (about 3 s between Tomcat's and Camel's start, 24-31 requests in it), answered 503.
        assertStarting(pod, "a POST without its required fields", answers, 400, "\"resultCode\":\"N\"");
        // an operator's read in the same window: 503 JSON "starting", never a 404; once ready, the list
        assertStarting(pod, "an operator's read", opsAnswers, 200, "service is starting");
        pods.add(pod);
        ingress.route(ports());
        return pod;
    }

    /**
     * What a starting pod answered one kind of request: before readiness nothing, 503 or already {@code routed};
     * after it {@code routed}; and some 503s, each a body with {@code starting} in it.
     */
    private static void assertStarting(ServicePod pod, String request, List<PodWatch.Answer> answers, int routed,
                                       String starting) {
        System.out.println("[shape] " + pod.name + " while starting answered " + request + " " + answers.stream()
                .collect(java.util.stream.Collectors.groupingBy(a -> (a.readyBefore() ? "ready " : "") + a.status(),
                        java.util.TreeMap::new, java.util.stream.Collectors.counting())));
        assertThat(answers.stream().filter(a -> a.readyBefore() ? a.status() != routed
                : a.status() != -1 && a.status() != 503 && a.status() != routed).toList())
                .as("answers of starting " + pod.name + " to " + request).isEmpty();
        assertThat(answers.stream().filter(a -> a.status() == 503).map(PodWatch.Answer::body).toList())
                .as(pod.name + " answered " + request + " 503 while Camel was starting").isNotEmpty()
                .allSatisfy(body -> assertThat(body).contains(starting));
    }

    private static HistoryChecker.Report check(RecordingSenders senders, String scenario) throws Exception {
        senders.close();
        HistoryChecker.Report report = HistoryChecker.check(senders, jdbc, simulator, Duration.ofSeconds(120));
        String line = scenario + ": " + report;
        System.out.println("[shape] " + line);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/production-shape.txt"), line + "\n",
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        return report;
    }

    /**
     * Patient lookups of 200-400 ms while pods come and go: each pod has registrations under way (and events queued
     * for its workers) when it is told to stop, as it would in production, where a registration takes 1.4-2.2 s.
     */
    static final DownstreamSimulator.Latency UNDER_WAY = new DownstreamSimulator.Latency(0, 2, 200, 400, 0, 2);

    /**
     * What a scenario without downstream faults promises beyond the checker's: no registration abandoned by a pod
     * that stopped (the redelivery job would rescue it, 15 minutes late in production, and register it again), no
     * row registered twice, no row finished otherwise than its form says (a message the survey side accepts gone
     * DEAD), traffic answered by more than one pod, and every pod still running registered rows.
     */
    private static void assertNothingAbandoned(HistoryChecker.Report report, int answeringPods) {
        assertThat(report.violations()).isEmpty();
        assertThat(report.storedWithout200()).isZero();
        assertThat(report.abandoned()).as("attempts abandoned by a stopping pod").isZero();
        assertThat(report.completedOnRetry()).as("rows registered more than once").isZero();
        assertThat(report.againstTheirForm()).as("rows of a known form DEAD, or of an unknown one COMPLETED").isEmpty();
        assertThat(report.pods()).as("pods that answered").hasSizeGreaterThanOrEqualTo(answeringPods);
        for (ServicePod pod : pods) {
            assertThat(registeredInThisScenario(pod)).as(pod.name + " registered rows in this scenario").isTrue();
        }
    }

    /** Where each pod's log stood when the running scenario began (a pod started since: its whole log). */
    private static final Map<String, Integer> logAtScenarioStart = new java.util.concurrent.ConcurrentHashMap<>();

    /** The running scenario's load generators: stopped after it whatever its end (a failed one's would post on). */
    private static final List<RecordingSenders> load = new ArrayList<>();

    private static RecordingSenders load(String prefix, int senders) {
        RecordingSenders started = new RecordingSenders(ingress.port, prefix, senders);
        load.add(started);
        return started;
    }

    @org.junit.jupiter.api.AfterEach
    void stopTheLoad() throws Exception {
        try {
            for (RecordingSenders senders : load) {
                senders.stop(); // all stop posting before any is awaited
            }
            for (RecordingSenders senders : load) {
                senders.close();
            }
        } finally {
            load.clear();
        }
    }

    @org.junit.jupiter.api.BeforeEach
    void markTheLogs() {
        logAtScenarioStart.clear();
        for (ServicePod pod : pods) {
            logAtScenarioStart.put(pod.name, pod.log().length());
        }
    }

    /** A row COMPLETED by {@code pod} since the scenario began (a pod that survived an earlier one shows its rows). */
    private static boolean registeredInThisScenario(ServicePod pod) {
        return java.util.regex.Pattern.compile("Inbox \\d+ COMPLETED")
                .matcher(pod.log().substring(logAtScenarioStart.getOrDefault(pod.name, 0))).find();
    }

    /** Load goes on until every pod now in the endpoints has registered a row (a pod just added gets its partitions late). */
    private static void awaitEveryPodRegistering() {
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                .until(() -> pods.stream().allMatch(ProductionShapeTest::registeredInThisScenario));
    }

    @Test
    @Order(1)
    void aRollingUpdateUnderLoadLosesAndDoublesNothing() throws Exception {
        simulator.setLatency(UNDER_WAY);
        // 4 senders (8 subjects a second): with 8, each pod's start under the load took 40-90 s on two cores
        RecordingSenders senders = load(RUN + "-roll-", 4);
        HistoryChecker.Report report;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= 30);
            // maxSurge 1, maxUnavailable 0: a new pod is ready before an old one leaves
            for (ServicePod old : List.copyOf(pods)) {
                add(senders);
                stop(old, senders);
            }
            long before = senders.acknowledged();
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= before + 30);
            awaitEveryPodRegistering();
            report = check(senders, "rolling update, 2 pods, 4 senders");
        } finally {
            simulator.setLatency(DownstreamSimulator.Latency.FAST);
        }

        assertNothingAbandoned(report, 3);
        assertThat(report.acknowledged()).isGreaterThan(60);
        // each row sealed by the pod that stored it and opened by the one that registered it (COMPLETED above)
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?"
                + " AND payload_key_id IS DISTINCT FROM 'shape'", Long.class, RUN + "-roll-%")).as("rows stored unsealed").isZero();
    }

    @Test
    @Order(2)
    void scalingInToOneAndOutToThreeUnderLoadLosesAndDoublesNothing() throws Exception {
        simulator.setLatency(UNDER_WAY);
        RecordingSenders senders = load(RUN + "-scale-", 4);
        HistoryChecker.Report report;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= 30);
            while (pods.size() > 1) {
                stop(pods.get(0), senders);
            }
            long one = senders.acknowledged();
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= one + 30);
            // two pods at once, as the HPA adds them
            ServicePod second = startPod();
            ServicePod third = startPod();
            pods.add(second.awaitReady(Duration.ofSeconds(180)));
            pods.add(third.awaitReady(Duration.ofSeconds(180)));
            ingress.route(ports());
            long three = senders.acknowledged();
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= three + 30);
            awaitEveryPodRegistering();
            report = check(senders, "scale 2 -> 1 -> 3, 4 senders");
        } finally {
            simulator.setLatency(DownstreamSimulator.Latency.FAST);
        }

        assertNothingAbandoned(report, 3);
    }

    @Test
    @Order(3)
    void aSlowDatabaseNever503sARowThatCommits() throws Exception {
        RecordingSenders senders = load(RUN + "-slowdb-", 8);
        await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= 30);
        database.slow(1000, 3000);
        long slowSince = System.nanoTime();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> System.nanoTime() - slowSince > 30_000_000_000L
                    || senders.attempts().stream().filter(a -> a.sentAt() > slowSince && a.status() == 503).count() >= 20);
        } finally {
            database.fast();
        }
        long fastAgain = senders.acknowledged();
        await().atMost(Duration.ofSeconds(90)).until(() -> senders.acknowledged() >= fastAgain + 30);
        HistoryChecker.Report report = check(senders, "slow database 1-3 s per statement, 8 senders");

        assertThat(report.violations()).isEmpty();
        assertThat(report.refused503()).as("receptions the slow database made the service refuse (else nothing was tried)")
                .isPositive();
        assertThat(report.storedWithout200()).as("a 503 for a row that committed").isZero();
    }

    @Test
    @Order(6)
    void slowDownstreamsKeepEveryConsumerInItsGroupAndRetryNothingEarly() throws Exception {
        // a backlog behind 4.5 s patient lookups: every worker held for seconds per row
        simulator.setLatency(new DownstreamSimulator.Latency(0, 2, 4500, 4500, 0, 2));
        RecordingSenders senders = load(RUN + "-slowdown-", 8);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledged() >= 120);
            senders.close();
            // the backlog drains through 4.5 s calls
            await().atMost(Duration.ofSeconds(150)).pollInterval(Duration.ofSeconds(1)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status NOT IN ('COMPLETED', 'DEAD')",
                    Long.class, RUN + "-slowdown-%") == 0);
        } finally {
            simulator.setLatency(DownstreamSimulator.Latency.FAST);
        }
        HistoryChecker.Report report = check(senders, "slow downstream 4.5 s, backlog " + senders.acknowledged());

        assertThat(report.violations()).isEmpty();
        assertThat(report.storedWithout200()).isZero();
        for (ServicePod pod : pods) {
            assertThat(pod.log()).as(pod.name + " left its consumer group")
                    .doesNotContain("max.poll.interval.ms").doesNotContain("poll timeout has expired");
        }
        // a FAILED row is retried only once due: never a second attempt within retry-delay of the first's end
        Long early = jdbc.queryForObject("SELECT count(*) FROM inbox_attempt a JOIN inbox_attempt b"
                + " ON b.inbox_id = a.inbox_id AND b.attempt_no = a.attempt_no + 1"
                + " JOIN inbox_message m ON m.id = a.inbox_id"
                + " WHERE m.srvy_drawup_no LIKE ? AND a.outcome = 'FAILED' AND b.started_at < a.finished_at + INTERVAL '2 seconds'",
                Long.class, RUN + "-slowdown-%");
        assertThat(early).isZero();
    }

    /**
     * Poison rows in quiet hours: twelve rows whose own patient lookups always get a 500, and no other traffic. The
     * circuit opens and half-opens again and again; its half-open trials are charged, so every row goes DEAD with
     * exactly one reply within about max-attempts x (retry-delay + open-duration), instead of being deferred
     * uncharged forever and blocking its subject. Twelve over three pods: one pod has four subjects at least, whose
     * failures (5 of 2 subjects open a circuit) open its circuit before their last attempts, which are half-open
     * trials; the test sees that circuit re-open (five rows could spread so that no circuit ever opened).
     */
    @Test
    @Order(4)
    void poisonRowsWhileTheCircuitFlapsAllGoDeadWithOneReplyEach() throws Exception {
        String prefix = RUN + "-poison-";
        DownstreamSimulator.Fault poison = simulator.failWhen("GET /legacy/patients/P-" + prefix, 500, "{\"error\":\"boom\"}");
        try {
            Map<String, Double> openedBefore = new LinkedHashMap<>();
            for (ServicePod pod : pods) {
                openedBefore.put(pod.name, legacyCircuitOpenings(pod));
            }
            RecordingSenders senders = RecordingSenders.exactly(ingress.port, prefix, 12);
            HistoryChecker.Report report = check(senders, "poison rows, no other traffic, circuit half-opening");
            assertThat(report.violations()).isEmpty();
            assertThat(report.storedWithout200()).isZero();
            assertThat(report.acknowledged()).isEqualTo(12);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'DEAD'"
                    + " AND attempts = ?", Long.class, prefix + "%", MAX_ATTEMPTS)).isEqualTo(12);
            Map<String, Double> reopened = new LinkedHashMap<>();
            for (ServicePod pod : pods) {
                reopened.put(pod.name, legacyCircuitOpenings(pod) - openedBefore.get(pod.name));
            }
            assertThat(reopened.values()).as("legacy circuit openings per pod " + reopened
                    + ": one opened, and re-opened after a failed half-open trial").anyMatch(n -> n >= 2);
        } finally {
            simulator.remove(poison);
        }
    }

    /** adapter_circuit_opened_total of the legacy downstream on {@code pod}, as Prometheus scrapes it. */
    private static double legacyCircuitOpenings(ServicePod pod) throws Exception {
        java.net.http.HttpResponse<String> scrape = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + pod.managementPort
                        + "/actuator/prometheus")).timeout(Duration.ofSeconds(10)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).as(pod.name + " metrics").isEqualTo(200);
        return scrape.body().lines().filter(l -> l.startsWith("adapter_circuit_opened_total{") && l.contains("downstream=\"legacy\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    /**
     * Security behind the real ingress: a client on another address (127.0.0.3) writes the legacy sender's
     * address (127.0.0.1) into X-Forwarded-For and guesses passwords through nginx. nginx writes the client's own
     * address in its place (ingress-nginx's default), the pods believe the header only from nginx (127.0.0.2), so
     * the guesser is limited on its own
     * address (429 once its failures are used up, on each pod) while the legacy sender keeps getting 200 — and
     * even its own wrong password is still a plain 401: nothing was counted against its address.
     */
    @Test
    @Order(7)
    void aForgedForwardedForThroughTheIngressLocksOutNobody() throws Exception {
        String wrong = com.hospital.surveyinbox.support.ServiceClient.basic("legacy", "a-wrong-guess");
        String right = com.hospital.surveyinbox.support.ServiceClient.LEGACY_AUTH;
        int limited = 0;
        for (int i = 0; i < 45; i++) {
            int status = post("127.0.0.3", wrong, "127.0.0.1", RUN + "-guess-" + i);
            assertThat(status).isIn(401, 429);
            limited += status == 429 ? 1 : 0;
            if (i % 5 == 0) {
                assertThat(post("127.0.0.1", right, null, RUN + "-legacy-" + i)).as("the legacy sender").isEqualTo(200);
            }
        }
        assertThat(limited).as("the guesser was limited on its own address").isPositive();
        assertThat(post("127.0.0.1", wrong, null, RUN + "-typo")).as("the sender's own address was never charged").isEqualTo(401);
        assertThat(post("127.0.0.3", right, "127.0.0.1", RUN + "-guesser-right")).as("right credentials always pass")
                .isEqualTo(200);
    }

    /** A POST through the ingress from a chosen local address (a raw socket: HttpClient cannot bind one). */
    private static int post(String from, String authorization, String forwardedFor, String subject) throws Exception {
        byte[] body = com.hospital.surveyinbox.support.ServiceClient.message(subject, "").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.bind(new java.net.InetSocketAddress(from, 0));
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", ingress.port), 5000);
            socket.setSoTimeout(30_000);
            StringBuilder head = new StringBuilder("POST /legacy/survey-send-info HTTP/1.1\r\nHost: ingress\r\n")
                    .append("Authorization: ").append(authorization).append("\r\n")
                    .append("Content-Type: application/json\r\nContent-Length: ").append(body.length).append("\r\n")
                    .append("Connection: close\r\n");
            if (forwardedFor != null) {
                head.append("X-Forwarded-For: ").append(forwardedFor).append("\r\n");
            }
            java.io.OutputStream out = socket.getOutputStream();
            out.write(head.append("\r\n").toString().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            java.io.InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) {
                line.append((char) b);
            }
            return Integer.parseInt(line.substring(9, 12));
        }
    }
}
