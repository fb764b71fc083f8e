package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.builder.AdviceWith;
import org.apache.camel.component.mock.MockEndpoint;
import org.apache.camel.support.DefaultExchange;
import org.apache.camel.test.spring.junit5.UseAdviceWith;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The route kit's shared setup: each route of {@code routes/} driven alone — the kit an engineer runs after
 * editing a route, one test class per route file ({@code InboxRegisterRouteTest} for
 * {@code inbox-register.camel.yaml}, …). Its consumer (Kafka, Quartz, platform-http) is replaced by a
 * {@code direct:} endpoint with AdviceWith, and the side effects it is about are woven by step id into
 * MockEndpoints; everything else (PostgreSQL, Redis, the downstream simulator) is real. The black-box tests
 * prove the whole; these pin each route.
 */
@UseAdviceWith
@TestPropertySource(properties = {
        "adapter.kafka.topic=routes-alone-tests",
        "adapter.kafka.group-id=routes-alone-tests",
        "spring.quartz.scheduler-name=routes-alone-tests",
        // the jobs are driven by hand here (their Quartz consumers are replaced), so they may start
        "adapter.inbox.redeliver-enabled=true",
        "adapter.retention.enabled=true",
        "adapter.retention.batch-size=2",
        // 16 rows a statement a run: more than the kit's retention tests leave due, fewer than the cap's test stores
        "adapter.retention.max-batches=8",
        "adapter.retention.keep-finished=P365D",
        "adapter.retention.keep-resendable=P730D",
        // a publish pool this small fills at once: receptions must not wait on it
        "adapter.kafka.publish-threads=1",
        "adapter.kafka.publish-queue=2"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
abstract class RouteKit extends IntegrationTest {

    private static CamelContext advisedContext;

    @Autowired
    protected CamelContext camel;

    @Autowired
    ProducerTemplate template;

    @Autowired
    InboxStore store;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    ObjectMapper mapper;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @BeforeEach
    void adviseOnceAndStart() throws Exception {
        if (advisedContext != camel) { // once per context (each test class gets its own: @DirtiesContext)
            AdviceWith.adviceWith(camel, "inbox-receive", a -> a.replaceFromWith("direct:receive-alone"));
            AdviceWith.adviceWith(camel, "inbox-process", a -> a.replaceFromWith("direct:process-alone"));
            AdviceWith.adviceWith(camel, "inbox-process-row", a ->
                    a.weaveById("inbox-process-register").replace().to("mock:register"));
            AdviceWith.adviceWith(camel, "inbox-publish", a -> a.weaveById("to-kafka-inbox-event").replace().to("mock:kafka"));
            AdviceWith.adviceWith(camel, "inbox-register-send", a ->
                    a.weaveById("to-http-survey-bundle").replace().toV("mock:bundle", "bundleRequest", "bundle"));
            AdviceWith.adviceWith(camel, "inbox-register", a ->
                    a.weaveById("inbox-register-resend-check").before().to("mock:resend-check"));
            AdviceWith.adviceWith(camel, "inbox-consents-lookup", a ->
                    a.weaveById("to-http-legacy-consents").before().to("mock:consent-lookup"));
            AdviceWith.adviceWith(camel, "inbox-reply", a -> a.weaveById("to-legacy-reply").replace().toV("mock:legacy-reply", "request", "answer"));
            AdviceWith.adviceWith(camel, "inbox-redeliver", a -> a.replaceFromWith("direct:redeliver-tick"));
            AdviceWith.adviceWith(camel, "inbox-retention", a -> a.replaceFromWith("direct:retention-tick"));
            AdviceWith.adviceWith(camel, "inbox-requeue-many", a ->
                    a.weaveById("inbox-requeue-many-row").before().to("mock:requeue-row"));
            AdviceWith.adviceWith(camel, "inbox-ops-changed-row", a ->
                    a.weaveById("inbox-ops-changed-row-find").before().to("mock:changed-row-find"));
            // last: an advised route moves to the front of the routes Camel builds, and this one must be built before
            // any route with a static sql: or http call (config/InterceptorsFirst)
            AdviceWith.adviceWith(camel, "inbox-interceptors-first", a -> { });
            camel.start();
            advisedContext = camel;
        }
        MockEndpoint.resetMocks(camel);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.completed()));
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200));
        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 201);
            e.getMessage().setBody("{\"dispatchId\":\"D-alone\"}");
        });
    }


    protected MockEndpoint mock(String uri) {
        return camel.getEndpoint(uri, MockEndpoint.class);
    }

    protected long stored(String subject) {
        return store.accept(new ReceivedMessage(subject, "SEND",
                ServiceClient.message(subject, "P-" + subject, "").getBytes(StandardCharsets.UTF_8), null)).inboxId();
    }

    /** {@code count} rows of one subject, stored in this order: their ids, oldest first. */
    protected long[] stored(String subject, int count) {
        long[] ids = new long[count];
        for (int i = 0; i < count; i++) {
            ids[i] = stored(subject);
        }
        return ids;
    }

    protected long aged(String subject, String status, int ageDays) {
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = ?, updated_at = now() - make_interval(days => ?), "
                + "created_at = now() - make_interval(days => ?) WHERE id = ?", status, ageDays, ageDays, id);
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, outcome) VALUES (?, 1, now(), ?)", id, status);
        return id;
    }

    protected String event(long id, String subject) throws Exception {
        return mapper.writeValueAsString(new InboxEvent(Long.toString(id), subject, "SEND"));
    }

    /**
     * inbox-register on a row that is not stored (as the synchronous path does), with some inbound headers; run without
     * a lease (no claim token), so the claim's renewal before a submission or resend is not part of it.
     */
    protected Outcome register(String subject, String json, Map<String, Object> inboundHeaders) {
        Exchange exchange = new DefaultExchange(camel);
        exchange.setProperty("row", new ClaimedRow(ClaimedRow.NOT_STORED, subject, "SEND", json.getBytes(StandardCharsets.UTF_8), 1, null));
        exchange.getMessage().setHeaders(new java.util.HashMap<>(inboundHeaders));
        Exchange done = template.send("direct:inbox-register", exchange);
        assertThat(done.getException()).isNull();
        return done.getProperty("outcome", Outcome.class);
    }

    /** The simulator's requests for one unkeyed call ({@code submission}, {@code resend}) of this subject's bundle. */
    protected long surveyCalls(String subject, String call) {
        return simulator().requests().stream()
                .filter(r -> r.line().startsWith("POST /survey/dispatch-bundles/" + subject + "/" + call)).count();
    }

    /** The bundle the first SEND created (the kit's bundle step is a mock): created on the simulator's survey side. */
    protected void bundleOnTheSurveySide(String subject, String json) throws Exception {
        com.fasterxml.jackson.databind.JsonNode message = mapper.readTree(json);
        String body = mapper.writeValueAsString(Map.of("srvyDrawupNo", subject, "formCd", message.path("formCd").asText(),
                "guestId", "G-" + subject, "consents", java.util.List.of(), "notify", true));
        java.net.http.HttpResponse<String> created = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(simulator().baseUrl() + "/survey/dispatch-bundles"))
                        .header("Idempotency-Key", subject).header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    }

    /** inbox-register on a claimed row (as a worker runs it), no inbound headers. */
    protected Outcome register(ClaimedRow row) {
        Exchange exchange = new DefaultExchange(camel);
        exchange.setProperty("row", row);
        Exchange done = template.send("direct:inbox-register", exchange);
        assertThat(done.getException()).isNull();
        return done.getProperty("outcome", Outcome.class);
    }

    /**
     * A DataSource whose next statement containing {@code fragment} runs (and, autocommitted, commits) on the server
     * and then fails as a connection dropped before its answer came back; {@code lost} goes from 1 to 0 then. A route's
     * camel-sql steps use it when it is in the message header {@code CamelSqlDataSource}.
     */
    protected static javax.sql.DataSource answerLostAfterCommit(javax.sql.DataSource target, String fragment,
            java.util.concurrent.atomic.AtomicInteger lost) {
        return withConnections(target, (real, method, args) -> {
            Object result = invoke(method, real, args);
            if (method.getName().equals("prepareStatement") && String.valueOf(args[0]).contains(fragment)) {
                java.sql.PreparedStatement statement = (java.sql.PreparedStatement) result;
                return java.lang.reflect.Proxy.newProxyInstance(RouteKit.class.getClassLoader(),
                        new Class<?>[] {java.sql.PreparedStatement.class}, (p, m, a) -> {
                            Object done = invoke(m, statement, a);
                            if (m.getName().startsWith("execute") && lost.compareAndSet(1, 0)) {
                                throw new java.sql.SQLException("An I/O error occurred while sending to the backend.", "08006");
                            }
                            return done;
                        });
            }
            return result;
        });
    }

    /**
     * A DataSource on which the next {@code failures} statements containing {@code fragment} fail before they run, as
     * on a connection the database dropped (SQLState 08006: the database is unavailable); {@code failures} counts down.
     * A route's camel-sql steps use it when it is in the message header {@code CamelSqlDataSource}.
     */
    protected static javax.sql.DataSource failingBeforeRun(javax.sql.DataSource target, String fragment,
            java.util.concurrent.atomic.AtomicInteger failures) {
        return withConnections(target, (real, method, args) -> {
            if (method.getName().equals("prepareStatement") && String.valueOf(args[0]).contains(fragment)
                    && failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new java.sql.SQLException("An I/O error occurred while sending to the backend.", "08006");
            }
            return invoke(method, real, args);
        });
    }

    /** What a proxied connection does with a call on the real one. */
    @FunctionalInterface
    private interface ConnectionCall {
        Object call(java.sql.Connection real, java.lang.reflect.Method method, Object[] args) throws Throwable;
    }

    /** {@code target}, each of its connections behind {@code call}. */
    private static javax.sql.DataSource withConnections(javax.sql.DataSource target, ConnectionCall call) {
        return new org.springframework.jdbc.datasource.DelegatingDataSource(target) {
            @Override
            public java.sql.Connection getConnection() throws java.sql.SQLException {
                java.sql.Connection real = super.getConnection();
                return (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(RouteKit.class.getClassLoader(),
                        new Class<?>[] {java.sql.Connection.class}, (proxy, method, args) -> call.call(real, method, args));
            }
        };
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
