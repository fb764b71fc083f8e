package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.SurveyInboxAdapterApplication;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import com.hospital.surveyinbox.support.TopicProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** Inbound internal headers, the prod profile's refusal of weak secrets. */
class HardeningTest extends IntegrationTest {

    @org.springframework.beans.factory.annotation.Autowired
    org.apache.camel.CamelContext camel;

    /**
     * A failure no route answers is an empty 500, never the exception's stack trace: on every HTTP consumer of the
     * routes, and on a REST route an engineer adds without an error handler (played here by one added for the test and
     * removed after it). platform-http's muteException is on by default in Camel 4.17 (written out on the reception's
     * URI): this guards the default across upgrades and against a route or a property that turns it off.
     */
    /** The shipped routes log no payload, no set of all headers (RouteLoggingCheck; the prod profile refuses them). */
    @Test
    void theShippedRoutesLogNoPayloadNorAllHeaders() {
        assertThat(com.hospital.surveyinbox.config.RouteLoggingCheck.problems(camel)).isEmpty();
    }

    @Test
    void noHttpConsumerWritesAnExceptionIntoItsAnswer() throws Exception {
        // the consumers' endpoints (a REST route's own endpoint is rest:…, the platform-http one behind it is made for it)
        java.util.List<org.apache.camel.component.platform.http.PlatformHttpEndpoint> http = camel.getEndpoints().stream()
                .filter(org.apache.camel.component.platform.http.PlatformHttpEndpoint.class::isInstance)
                .map(org.apache.camel.component.platform.http.PlatformHttpEndpoint.class::cast).toList();
        assertThat(http).as("the reception and the operator routes").hasSizeGreaterThan(5)
                .allSatisfy(endpoint -> assertThat(endpoint.isMuteException()).as(endpoint.getEndpointUri()).isTrue());

        camel.addRoutes(new org.apache.camel.builder.RouteBuilder() {
            @Override
            public void configure() {
                rest("/ops/escape-test").get().routeId("escape-test-rest").to("direct:escape-test");
                from("direct:escape-test").routeId("escape-test")
                        .throwException(new IllegalStateException("internal detail db=inbox host=10.0.0.7"));
            }
        });
        try {
            Reply reply = client.ops("/ops/escape-test");
            assertThat(reply.status()).isEqualTo(500);
            assertThat(reply.body()).doesNotContain("internal detail", "IllegalStateException", "at org.apache");
        } finally {
            for (String route : java.util.List.of("escape-test-rest", "escape-test")) {
                camel.getRouteController().stopRoute(route);
                camel.removeRoute(route);
            }
        }
    }

    @Test
    void ignoresInboundCamelAndKafkaHeaders() {
        String subject = uniqueSubject("HDR");
        Reply reply = client.receive(ServiceClient.message(subject, ""), Map.of(
                "CamelHttpResponseCode", "202",
                "CamelHttpUri", "http://evil.example/",
                "kafka.KEY", "evil-key",
                "X-Result-Code", "N"));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
        String id = reply.json().get("inboxId").asText();
        TopicProbe topic = TopicProbe.get("survey-send-info-received");
        await().atMost(Duration.ofSeconds(20)).until(() -> !topic.forInboxId(id).isEmpty());
        assertThat(topic.forInboxId(id).get(0).key()).isEqualTo(subject);
        // no inbound header becomes a record header: only the row's own trace context
        String traced = jdbc.queryForObject("SELECT trace_parent FROM inbox_message WHERE id = ?", String.class,
                Long.parseLong(id));
        assertThat(topic.forInboxId(id).get(0).headers()).containsOnlyKeys("traceparent", "inboxDatabase").containsEntry("traceparent", traced)
                .containsEntry("inboxDatabase", jdbc.queryForObject("SELECT CAST(id AS TEXT) FROM inbox_database", String.class));
    }

    @Test
    void theProdProfileRefusesToStartWithDefaultCredentialsWithoutEncryptionOrWithAStuckResetShorterThanAWorker() {
        List<String> args = new ArrayList<>(List.of(
                "--adapter.security.legacy.username=legacy", "--adapter.security.legacy.password=legacy-dev-secret",
                "--adapter.security.ops.username=ops", "--adapter.security.ops.password=short",
                // a password being rotated in is accepted as the password is: the same floor
                "--adapter.security.legacy.next-password=short-next-one",
                "--server.port=0", "--management.server.port=0", "--adapter.inbox.redeliver-enabled=false",
                "--adapter.retention.enabled=false", "--spring.quartz.scheduler-name=prod-check",
                "--adapter.crypto.active-key=k1", "--adapter.crypto.keys.k1=" + PayloadEncryptionTest.K1,
                "--adapter.crypto.enabled=false",
                "--adapter.security.trusted-proxies=10.42.0.0/16,0.0.0.0/0", "--server.forward-headers-strategy=native",
                // above twice the shutdown timeout (300 s), below it plus the outcome record's and read-back's minutes
                "--adapter.inbox.stuck-processing-after=PT6M",
                "--adapter.inbox.redeliver-cron=0 */15 * * * ?",
                // every request thread a reception's: none left for the operators' API while a slow database holds them
                "--adapter.reception.max-in-flight=200",
                // no spacing between a failed row's attempts, nor a refused reply's backoff
                "--adapter.inbox.retry-delay=PT0S",
                // a slow legacy system "fixed" by one environment variable: 9 x (2 + 2 + 30) + 2 x 30 + 6 x (2 + 0) + 20 = 398 s
                "--adapter.http.response-timeout=PT30S",
                // and no socket timeout: a statement to a database that stopped answering would wait forever
                "--spring.datasource.hikari.data-source-properties.socketTimeout=0"));

        assertThatThrownBy(() -> new SpringApplicationBuilder(SurveyInboxAdapterApplication.class).profiles("prod")
                .run(args.toArray(String[]::new)))
                .rootCause()
                .hasMessageContaining("Refusing to start in prod")
                .hasMessageContaining("adapter.security.legacy.password is a known default")
                .hasMessageContaining("adapter.security.ops.password is shorter than 16")
                .hasMessageContaining("adapter.security.legacy.next-password is shorter than 16")
                .hasMessageContaining("adapter.crypto.enabled must be true")
                .hasMessageContaining("adapter.retention.enabled must be true")
                .hasMessageContaining("spring.data.redis.password is empty")
                .hasMessageContaining("adapter.security.trusted-proxies must not contain 0.0.0.0/0")
                .hasMessageContaining("server.forward-headers-strategy must be none")
                .hasMessageContaining("adapter.inbox.stuck-processing-after (PT6M) must be longer than twice camel.main.shutdown-timeout (150 s")
                .hasMessageContaining("camel.main.shutdown-timeout (150 s) must cover a row whose every wait runs out (398 s")
                .hasMessageContaining("spring.lifecycle.timeout-per-shutdown-phase (120 s) must cover a synchronous registration whose every wait runs out")
                .hasMessageContaining("the PostgreSQL driver's socketTimeout must be set")
                .hasMessageContaining("adapter.inbox.redeliver-cron (0 */15 * * * ?) must fire at least every 5 minutes")
                .hasMessageContaining("adapter.reception.max-in-flight (200) must be below server.tomcat.threads.max (200)")
                .hasMessageContaining("adapter.inbox.retry-delay (PT0S) must be at least 1 s");
    }

    /**
     * The prod check's Redis login as Boot reads it: with spring.data.redis.url set, the URL's credentials alone (the
     * password property is ignored), so a URL without a password is refused whatever the property says.
     */
    @Test
    void theProdRedisCheckJudgesTheCredentialsBootUses() {
        java.util.function.Function<String[], Boolean> judged = pairs -> {
            org.springframework.mock.env.MockEnvironment environment = new org.springframework.mock.env.MockEnvironment();
            for (int i = 0; i < pairs.length; i += 2) {
                environment.setProperty(pairs[i], pairs[i + 1]);
            }
            return com.hospital.surveyinbox.config.ProductionSafetyCheck.redisAuthenticated(environment);
        };
        assertThat(judged.apply(new String[] {})).isFalse();
        assertThat(judged.apply(new String[] {"spring.data.redis.password", "  "})).isFalse();
        assertThat(judged.apply(new String[] {"spring.data.redis.password", "a-redis-secret"})).isTrue();
        assertThat(judged.apply(new String[] {"spring.data.redis.url", "redis://redis:6379",
                "spring.data.redis.password", "a-redis-secret"})).as("Boot ignores the property beside a URL").isFalse();
        assertThat(judged.apply(new String[] {"spring.data.redis.url", "redis://:@redis:6379"})).isFalse();
        assertThat(judged.apply(new String[] {"spring.data.redis.url", "rediss://adapter:a-redis-secret@redis:6380"})).isTrue();
        assertThat(judged.apply(new String[] {"spring.data.redis.url", "redis://:a-redis-secret@redis:6379"})).isTrue();
        assertThat(judged.apply(new String[] {"spring.data.redis.ssl.bundle", "redis-ca"})).as("a truststore is no login").isFalse();
    }

    @Test
    void theProdCheckRunsInAnyLetterCaseAndRefusesOneSharedPassword() {
        String shared = "a-long-shared-secret-0123456789";
        List<String> args = new ArrayList<>(List.of(
                "--adapter.security.legacy.username=legacy", "--adapter.security.legacy.password=" + shared,
                "--adapter.security.ops.username=ops", "--adapter.security.ops.password=" + shared,
                // and the operators' next password, the legacy sender's current one: the legacy secret opened /ops
                "--adapter.security.ops.next-password=" + shared,
                // and a viewer's: its password would open the operators' writes
                "--adapter.security.ops-viewer.username=viewer", "--adapter.security.ops-viewer.password=" + shared,
                "--server.port=0", "--management.server.port=0", "--adapter.inbox.redeliver-enabled=false",
                "--adapter.retention.enabled=false", "--spring.quartz.scheduler-name=prod-case-check",
                "--adapter.crypto.enabled=true",
                "--adapter.crypto.active-key=k1", "--adapter.crypto.keys.k1=" + PayloadEncryptionTest.K1));

        assertThatThrownBy(() -> new SpringApplicationBuilder(SurveyInboxAdapterApplication.class).profiles("Prod")
                .run(args.toArray(String[]::new)))
                .rootCause()
                .hasMessageContaining("Refusing to start in prod")
                .hasMessageContaining("adapter.security.legacy.password and adapter.security.ops.password must differ")
                .hasMessageContaining("adapter.security.legacy.password and adapter.security.ops.next-password must differ")
                .hasMessageContaining("adapter.security.ops.password and adapter.security.ops-viewer.password must differ");
    }

    /**
     * Logging turned up for an incident (LOGGING_LEVEL_ROOT=DEBUG, Camel's or the HTTP client's loggers, Boot's web
     * group, a parent such as org) or Camel's tracer wrote patient numbers, names and mobile numbers into the logs:
     * prod refuses them, and the service's own loggers stay free to go to DEBUG; so it refuses management endpoints
     * beyond the probes' and metrics' (loggers sets DEBUG at run time, a heap dump holds decrypted payloads and keys,
     * and the management port asks no login). Also when prod is the default profile
     * (SPRING_PROFILES_DEFAULT=prod loads application-prod.yaml, and skipped every prod check).
     */
    @Test
    void theProdCheckRefusesLoggingThatWritesPatientDataAndRunsAsTheDefaultProfile() {
        org.springframework.mock.env.MockEnvironment environment = new org.springframework.mock.env.MockEnvironment();
        environment.setDefaultProfiles("prod");
        environment.getPropertySources().addLast(new org.springframework.core.env.SystemEnvironmentPropertySource("systemEnvironment",
                Map.of("LOGGING_LEVEL_ROOT", "DEBUG", "LOGGING_LEVEL_ORG_APACHE_HC_CLIENT5_HTTP_WIRE", "DEBUG", "DEBUG", "",
                        "LOGGING_GROUP_INCIDENT", "org.quartz,org.apache.camel", "LOGGING_LEVEL_INCIDENT", "DEBUG",
                        "MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE_0", "Health", "MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE_1", "Loggers",
                        "MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE_2", "heapdump")));
        environment.setProperty("logging.level.org", "trace");
        environment.setProperty("logging.level.web", "DEBUG");
        environment.setProperty("logging.level.org.apache.camel.component.http", "DEBUG");
        environment.setProperty("logging.level.com.hospital.surveyinbox", "DEBUG");
        environment.setProperty("logging.level.org.quartz", "DEBUG");
        environment.setProperty("logging.level.org.springframework.jdbc.core.StatementCreatorUtils", "INFO");
        environment.setProperty("camel.main.tracing", "true");
        environment.setProperty("camel.component.http.log-http-activity", "true");
        environment.setProperty("logging.group.quiet", "org.quartz");
        environment.setProperty("logging.level.quiet", "TRACE");
        var check = new com.hospital.surveyinbox.config.ProductionSafetyCheck(com.hospital.surveyinbox.support.TestProperties.bind(Map.of()),
                environment, new org.springframework.beans.factory.support.StaticListableBeanFactory().getBeanProvider(javax.sql.DataSource.class));

        assertThatThrownBy(check::afterPropertiesSet)
                .hasMessageContaining("Refusing to start in prod")
                .hasMessageContaining("logging.level.root (DEBUG) must be INFO or above")
                .hasMessageContaining("logging.level.org.apache.hc.client5.http.wire (DEBUG) must be INFO or above")
                .hasMessageContaining("logging.level.org (TRACE) must be INFO or above")
                .hasMessageContaining("logging.level.web (DEBUG) must be INFO or above")
                .hasMessageContaining("logging.level.org.apache.camel.component.http (DEBUG) must be INFO or above")
                .hasMessageContaining("camel.main.tracing must be false")
                .hasMessageContaining("management.endpoints.web.exposure.include must name only health, info, prometheus or "
                        + "metrics (not Loggers, heapdump)")
                .hasMessageContaining("logging.level.incident (DEBUG) must be INFO or above")
                .hasMessageContaining("debug (DEBUG) must be unset or false")
                .hasMessageContaining("camel.component.http.log-http-activity must be false")
                .hasMessageNotContaining("logging.level.quiet")
                .hasMessageNotContaining("logging.level.com.hospital.surveyinbox")
                .hasMessageNotContaining("logging.level.org.quartz")
                .hasMessageNotContaining("StatementCreatorUtils");
    }

    /**
     * The downstream calls carry patients' names, phone numbers and consents: prod refuses a plain {@code http://} base
     * URL (any letter case), naming the setting and not the URL (its user-info would be a secret), unless
     * adapter.http.plain-http-allowed says a service mesh encrypts the traffic between pods; https passes.
     */
    @Test
    void theProdCheckRefusesPlainHttpDownstreamsUnlessSomethingElseEncryptsThem() {
        Map<String, String> plain = Map.of("adapter.legacy.base-url", "HTTP://user:s3cret@legacy.internal/api",
                "adapter.account.base-url", "https://account.internal", "adapter.survey.base-url", "http://survey.internal");
        assertThatThrownBy(prodCheck(plain)::afterPropertiesSet)
                .hasMessageContaining("adapter.legacy.base-url must be https")
                .hasMessageContaining("adapter.survey.base-url must be https")
                .hasMessageNotContaining("adapter.account.base-url")
                .hasMessageNotContaining("s3cret");

        Map<String, String> meshed = new java.util.HashMap<>(plain);
        meshed.put("adapter.http.plain-http-allowed", "true");
        assertThatThrownBy(prodCheck(meshed)::afterPropertiesSet).hasMessageNotContaining("base-url");

        Map<String, String> encrypted = Map.of("adapter.legacy.base-url", "https://legacy.internal/api",
                "adapter.account.base-url", "https://account.internal", "adapter.survey.base-url", "https://survey.internal");
        assertThatThrownBy(prodCheck(encrypted)::afterPropertiesSet)
                .hasMessageContaining("Refusing to start in prod") // the test's other settings are not prod's
                .hasMessageNotContaining("base-url");
    }

    /**
     * A Secret without SPRING_KAFKA_BOOTSTRAP_SERVERS or SPRING_DATA_REDIS_HOST left the broker and Redis at their
     * fallbacks, this pod: the pods turned ready and answered 200 while no event was published. Prod refuses an address
     * left unset (the broker fallback in any spelling of this machine), naming no value; one set on purpose passes,
     * a sidecar on localhost too, and so do a URL, sentinels or cluster nodes however they are bound.
     */
    @Test
    void theProdCheckRefusesABrokerOrRedisLeftAtTheFallbackToThePodItself() {
        java.util.function.Function<Map<String, String>, String> problems = HardeningTest::prodProblems;
        String broker = "camel.component.kafka.brokers names no broker but this pod";
        String redis = "spring.data.redis.host is not set";
        // config/application.yaml's fallback for the brokers, Boot's for Redis: nothing set
        assertThat(problems.apply(Map.of("camel.component.kafka.brokers", "localhost:9092"))).contains(broker, redis);
        assertThat(problems.apply(Map.of())).contains(broker);
        for (String local : List.of(" LOCALHOST:9092 , 127.0.0.1:9093", "[::1]:9092", "0.0.0.0:9092", "kafka.localhost:9092",
                "PLAINTEXT://localhost.:9092", "::ffff:127.0.0.1")) {
            assertThat(problems.apply(Map.of("camel.component.kafka.brokers", local))).as(local).contains(broker);
        }
        assertThat(problems.apply(Map.of("spring.data.redis.host", " "))).as("blank").contains(redis);

        // set on purpose: a real address, or a sidecar on localhost
        for (Map<String, String> set : List.of(
                Map.of("camel.component.kafka.brokers", "kafka-0.kafka:9092,localhost:9092", "spring.data.redis.host", "redis.data"),
                Map.of("spring.kafka.bootstrap-servers", "localhost:9092", "camel.component.kafka.brokers", "localhost:9092",
                        "spring.data.redis.host", "127.0.0.1"),
                Map.of("camel.component.kafka.brokers", "10.1.2.3:9092", "spring.data.redis.url", "rediss://:a-redis-secret@redis_1.data:6380"),
                Map.of("camel.component.kafka.brokers", "SASL_SSL://b-1.kafka.internal:9096", "spring.data.redis.sentinel.master", "primary"),
                Map.of("camel.component.kafka.brokers", "kafka:9092", "spring.data.redis.cluster.nodes[0]", "redis-0:6379"),
                Map.of("camel.component.kafka.brokers", "kafka:9092", "spring.data.redis.cluster.nodes", "redis-0:6379,redis-1:6379"))) {
            assertThat(problems.apply(set)).as(set.toString()).doesNotContain(broker, redis, "a-redis-secret");
        }
    }

    /**
     * The actuator answers without a login on the management port; a ConfigMap that dropped management.server.port, or
     * set it to server.port, put /actuator/prometheus and the health groups on the public port. Prod refuses both.
     */
    @Test
    void theProdCheckRefusesTheActuatorOnThePublicPort() {
        java.util.function.Function<Map<String, String>, String> problems = HardeningTest::prodProblems;
        String shared = "management.server.port must be set apart from server.port";
        assertThat(problems.apply(Map.of())).contains(shared + " (8080)");
        assertThat(problems.apply(Map.of("management.server.port", "8080"))).contains(shared);
        assertThat(problems.apply(Map.of("server.port", "9000", "management.server.port", " 9000 "))).contains(shared + " (9000)");
        assertThat(problems.apply(Map.of("server.port", "8081", "management.server.port", "08081"))).as("the same number")
                .contains(shared + " (8081)");
        assertThat(problems.apply(Map.of("management.server.port", "8081"))).doesNotContain(shared);
        assertThat(problems.apply(Map.of("server.port", "8081", "management.server.port", "8080"))).doesNotContain(shared);
        assertThat(problems.apply(Map.of("server.port", "0", "management.server.port", "0"))).as("two ports the system picks")
                .doesNotContain(shared);
    }

    /** What the prod check refuses with the environment {@code settings} (the test's other settings are never prod's). */
    private static String prodProblems(Map<String, String> settings) {
        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(prodCheck(Map.of(), settings)::afterPropertiesSet);
        assertThat(refused).as("the test's other settings are not prod's").hasMessageContaining("Refusing to start in prod");
        return refused.getMessage();
    }

    private static com.hospital.surveyinbox.config.ProductionSafetyCheck prodCheck(Map<String, String> adapterKeys) {
        return prodCheck(adapterKeys, Map.of());
    }

    /** The prod check over {@code adapterKeys} (bound as the service binds them) and the environment {@code settings}. */
    private static com.hospital.surveyinbox.config.ProductionSafetyCheck prodCheck(Map<String, String> adapterKeys,
                                                                                 Map<String, String> settings) {
        org.springframework.mock.env.MockEnvironment environment = new org.springframework.mock.env.MockEnvironment();
        environment.setActiveProfiles("prod");
        settings.forEach(environment::setProperty);
        return new com.hospital.surveyinbox.config.ProductionSafetyCheck(com.hospital.surveyinbox.support.TestProperties.bind(adapterKeys),
                environment, new org.springframework.beans.factory.support.StaticListableBeanFactory().getBeanProvider(javax.sql.DataSource.class));
    }

    /**
     * A production profile spelt another way (production, prd, a site's prod-kr alone) started like dev: the payload
     * stored in clear, "password" an operator password, none of the prod checks run. It stops the boot, naming it.
     */
    @Test
    void aProfileThatReadsAsProductionButIsNotProdStopsTheBoot() {
        List<String> args = List.of("--adapter.security.legacy.username=legacy", "--adapter.security.legacy.password=password",
                "--adapter.security.ops.username=ops", "--adapter.security.ops.password=password",
                "--server.port=0", "--management.server.port=0", "--adapter.inbox.redeliver-enabled=false",
                "--adapter.retention.enabled=false", "--spring.quartz.scheduler-name=prod-lookalike-check");
        for (String profile : List.of("production", "PRD", "prod-kr", "live")) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(SurveyInboxAdapterApplication.class).profiles(profile)
                    .run(args.toArray(String[]::new)))
                    .as(profile)
                    .rootCause()
                    .hasMessageContaining("Refusing to start: the active profile " + profile + " reads as production but is not prod");
        }
        // names that merely contain prod (staging's, a demo's) are not production's
        for (String profile : List.of("preprod", "non-prod", "delivery", "product-demo", "dev")) {
            org.springframework.mock.env.MockEnvironment environment = new org.springframework.mock.env.MockEnvironment();
            environment.setActiveProfiles(profile);
            new com.hospital.surveyinbox.config.ProductionSafetyCheck(com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()),
                    environment, new org.springframework.beans.factory.support.StaticListableBeanFactory().getBeanProvider(javax.sql.DataSource.class))
                    .afterPropertiesSet();
        }
    }

    /**
     * A request without credentials is answered before the service reads its body: a form-typed PUT (Boot's
     * FormContentFilter would read and split it, before Spring Security) or POST (the CSRF check asks for a
     * parameter, and Tomcat would read a form body to find it). The body announced here is never sent: a service
     * that reads it waits for it and never answers.
     */
    @Test
    void anUnauthenticatedFormRequestIsAnsweredWithoutItsBodyBeingRead() {
        for (String requestLine : List.of("PUT /legacy/survey-send-info", "POST /legacy/survey-send-info",
                "PATCH /ops/inbox/1", "POST /ops/inbox/1/requeue", "POST /ops/anything")) {
            String statusLine = answerWithoutBody(requestLine, "application/x-www-form-urlencoded");
            assertThat(statusLine).as(requestLine).matches("HTTP/1\\.1 4\\d\\d .*");
        }
        String multipart = answerWithoutBody("POST /ops/anything", "multipart/form-data; boundary=x");
        assertThat(multipart).matches("HTTP/1\\.1 4\\d\\d .*");
    }

    /**
     * Spring Security's firewall read a C1 control in a header value (byte 0x85, read as U+0085: "…" in Windows-1252)
     * or a control in a parameter's name as an attack, and threw where Camel read the headers: a bare 500 the sender
     * retries for ever. An unrelated header or parameter is no business of the reception (200, stored); an
     * Idempotency-Key with a C1 control is the contract's 400 naming the header; a URL the firewall refuses is
     * answered as a bad request too (400, N, the JSON body), nothing stored.
     */
    @Test
    void whatTheFirewallRefusedIsAnsweredAsTheContractSays() {
        String auth = ServiceClient.basic("legacy", "legacy-test-secret");
        record Case(String target, String header, int status, String resultCode) {}
        for (Case c : List.of(
                new Case("/legacy/survey-send-info", "X-Note: abc\u0085", 200, "Y"),
                new Case("/legacy/survey-send-info?a%01=1", "X-Note: plain", 200, "Y"),
                new Case("/legacy/survey-send-info", "Idempotency-Key: key\u0085", 400, "N"),
                new Case("/legacy/survey-send-info;x=1", "X-Note: plain", 400, "N"))) {
            String subject = uniqueSubject("FWL");
            String answer = rawPost(c.target(), c.header(), auth, ServiceClient.message(subject, ""));
            assertThat(answer).as(c.toString()).startsWith("HTTP/1.1 " + c.status() + " ")
                    .containsIgnoringCase("X-Result-Code: " + c.resultCode()).contains("\"resultCode\":\"" + c.resultCode() + "\"");
            if (c.status() == 400) {
                assertThat(answer).as(c.toString()).doesNotContain("key\u0085");
            }
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Integer.class, subject))
                    .as(c.toString()).isEqualTo(c.status() == 200 ? 1 : 0);
        }
    }

    /** A POST of {@code body} with one extra header line written as bytes (ISO-8859-1); the whole answer. */
    private String rawPost(String target, String headerLine, String auth, String body) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            byte[] json = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            String head = "POST " + target + " HTTP/1.1\r\nHost: localhost:" + port + "\r\nAuthorization: " + auth
                    + "\r\nContent-Type: application/json\r\n" + headerLine + "\r\nContent-Length: " + json.length
                    + "\r\nConnection: close\r\n\r\n";
            java.io.OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.write(json);
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(target, e);
        }
    }

    /** Sends the headers of a 1 MiB body and no body; the status line, or what timed out. */
    private String answerWithoutBody(String requestLine, String contentType) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            String head = requestLine + " HTTP/1.1\r\nHost: localhost:" + port + "\r\nContent-Type: " + contentType
                    + "\r\nContent-Length: 1048576\r\nConnection: close\r\n\r\n";
            java.io.OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.flush();
            java.io.InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != -1 && b != '\r' && b != '\n'; b = in.read()) {
                line.append((char) b);
            }
            return line.toString();
        } catch (java.net.SocketTimeoutException e) {
            return "no answer within 5 s: the service waits for the body";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(requestLine, e);
        }
    }
}
