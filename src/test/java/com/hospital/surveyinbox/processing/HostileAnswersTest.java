package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * A downstream that is broken or hostile, answering what no contract allows: the call fails as a system error (its
 * circuit hears of it) instead of ending the pod, holding a worker or corrupting the next request. The test context
 * runs with connect and response timeouts of 1 s, so a call's deadline is 3 s.
 */
class HostileAnswersTest extends IntegrationTest {

    @Autowired
    DownstreamCircuits circuits;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    private DownstreamSimulator.Fault answer(String methodAndPath, int status, String body, Map<String, String> headers,
                                             long dripMillis) {
        return simulator().add(new DownstreamSimulator.Fault(s -> s.equals(methodAndPath), status, body, 0, headers, dripMillis));
    }

    private String submitFailing(String subject, DownstreamSimulator.Fault fault) {
        try {
            String id = client.accept(ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"SUBMIT\""));
            rows.awaitAttempt(id, 1, "FAILED");
            return id;
        } finally {
            simulator().remove(fault);
        }
    }

    @Autowired
    org.apache.camel.CamelContext camel;

    /**
     * An accepted answer in a charset no JVM knows ({@code charset=x-bogus}) cannot be read as text: a system error
     * that counts against the circuit like any failed answer. Thrown past the circuit, a half-open trial never came
     * back: after as many such trials as the threshold the circuit stayed half-open for good, every row of the
     * downstream deferred with no alert.
     */
    @Test
    void anAnswerInACharsetNoJvmKnowsCountsAgainstTheCircuit() {
        double counted = meters.counter("adapter.downstream.errors", "call", "inbox-register-survey-submission", "kind", "unreadable").count();
        try {
            for (int i = 0; i < 5; i++) {
                String subject = uniqueSubject("BOGUSCS");
                submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200, "{}",
                        Map.of("Content-Type", "application/json; charset=x-bogus-charset"), 0));
            }
            assertThat(meters.counter("adapter.downstream.errors", "call", "inbox-register-survey-submission", "kind", "unreadable").count())
                    .isEqualTo(counted + 5);
            assertThat(circuits.state("survey")).isEqualTo(DownstreamCircuits.State.OPEN);
        } finally {
            circuits.reset("survey");
        }
    }

    /**
     * A gateway answering for the survey API after losing its route, in text that is not JSON ("404 page not found",
     * "no Route matched", "Forbidden"): not the API's answer, so it counts against the circuit, which opens and defers
     * the rows uncharged. Taken for a refusal, it told the circuit "up" at every call: every row was charged through
     * the outage and went DEAD within minutes, each with a DEAD reply. A 4xx in JSON, or with no body (a lookup's bare
     * 404 may be its "no such survey"), still counts as the API's answer.
     */
    @Test
    void aTextFourHundredFromAGatewayCountsAgainstTheCircuit() {
        String[] gateway = {"404 page not found", "no Route matched with those values", "Forbidden"};
        double counted = meters.counter("adapter.downstream.errors", "call", "inbox-register-survey-submission", "kind", "gateway-4xx").count();
        for (int i = 0; i < 5; i++) {
            String subject = uniqueSubject("GWLOST");
            submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", i % 2 == 0 ? 404 : 403,
                    gateway[i % 3], Map.of("Content-Type", "text/plain"), 0));
        }
        assertThat(circuits.state("survey")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(meters.counter("adapter.downstream.errors", "call", "inbox-register-survey-submission", "kind", "gateway-4xx").count())
                .as("in the outage view (kind!=\"4xx\")").isEqualTo(counted + 5);
        circuits.reset("survey");

        String[] api = {"{\"code\":\"BUNDLE_NOT_FOUND\",\"message\":\"no bundle\"}", "{\"message\":\"no bundle\"}", ""};
        for (int i = 0; i < 6; i++) {
            String subject = uniqueSubject("APIREFUSED");
            submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 404, api[i % 3], Map.of(), 0));
        }
        assertThat(circuits.state("survey")).isEqualTo(DownstreamCircuits.State.CLOSED);
    }

    /**
     * A call the open circuit refuses is a quiet deferral: the interceptor's refusal reaches the registration's doCatch
     * with no error handler's log on the way (the interceptors are set up by a route of their own, config/
     * InterceptorsFirst, whose steps must not get Camel's default error handler: an ERROR line "Exhausted after
     * delivery attempt" for every deferred row of an outage).
     */
    @Test
    void aCallTheOpenCircuitRefusesLogsNoErrorHandlerLine() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("org.apache.camel");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events = new ch.qos.logback.core.read.ListAppender<>();
        events.start();
        logger.addAppender(events);
        try {
            for (int request = 0; request < 5; request++) {
                circuits.recordFailure("legacy", "inbox-register-legacy-patient", request);
            }
            assertThat(circuits.isOpen("legacy")).isTrue();
            String id = client.accept(ServiceClient.message(uniqueSubject("LEGACYDOWN"), "P-LEGACYDOWN", ""));

            rows.awaitStatus(id, "FAILED");
            assertThat(rows.attempts(id)).as("uncharged").isZero();
        } finally {
            logger.detachAppender(events);
            circuits.reset("legacy");
        }
        assertThat(events.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .noneMatch(line -> line.contains("CircuitOpenException") || line.contains("Exhausted after delivery attempt"));
    }

    /**
     * While the survey (or account) circuit is open a SEND waits uncharged before its first call: it made the consent
     * and patient lookups and the guest search at every retry of the outage (200 rows a tick), load on the legacy
     * system for bundles that could not go out, and was deferred only at the bundle.
     */
    @Test
    void aSendWaitsBeforeItsFirstCallWhileALaterDownstreamIsOpen() {
        for (int request = 0; request < 5; request++) {
            circuits.recordFailure("survey", "inbox-register-survey-bundle", request);
        }
        assertThat(circuits.isOpen("survey")).isTrue();
        String subject = uniqueSubject("SURVEYDOWN");
        String patno = "P-" + subject;

        String id = client.accept(ServiceClient.message(subject, patno, ""));

        rows.awaitStatus(id, "FAILED");
        assertThat(rows.attempts(id)).as("uncharged").isZero();
        assertThat(simulator().requests()).noneMatch(r -> r.line().contains(patno));
    }

    /**
     * Replies to the legacy system go through the same HTTP interceptor as the registrations' calls (Camel installs
     * a route configuration's interceptSendToEndpoint for the whole context), but their answers must not move the
     * legacy circuit: a reply endpoint failing alone (five replies refused 503) opened it and deferred every
     * registration's legacy calls. The reply consults the circuit itself (it waits while it is open).
     */
    @Test
    void repliesTheLegacySystemRefusesDoNotOpenItsCircuit() {
        DownstreamSimulator.Fault replyDown = answer("POST /legacy/survey-send-results", 503, "{}", Map.of(), 0);
        try {
            for (int i = 0; i < 6; i++) {
                String id = client.accept(ServiceClient.message(uniqueSubject("RPLDOWN"), "P-RPLDOWN", ""));
                rows.awaitStatus(id, "COMPLETED");
                jdbc.update("UPDATE inbox_message SET reply_status = 'PENDING', reply_reason_code = 'NOTIFY_SKIPPED', "
                        + "reply_reason = 'no notification', reply_updated_at = now() WHERE id = ?", Long.parseLong(id));
                camel.createProducerTemplate().sendBody("direct:inbox-reply", Map.of("id", Long.parseLong(id)));
                assertThat(rows.row(id)).containsEntry("reply_status", "FAILED").containsEntry("reply_last_error", "legacy answered HTTP 503");
            }
            assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        } finally {
            simulator().remove(replyDown);
        }
    }

    @Autowired
    com.hospital.surveyinbox.config.AdapterProperties properties;

    /**
     * The running client has this service's settings, not camel-http-starter's defaults, which its own customizer
     * copies onto the component: at the same order the two customizers ran in either order, and a context whose
     * defaults came last pooled 20 connections per host with 3-minute connect, socket and pool timeouts. It pools
     * what HttpPoolSizeTest computes: a connection for every call that can run at once.
     */
    @Test
    void theClientRunsOnThisServicesSettingsNotTheStartersDefaults() {
        for (String name : List.of("http", "https")) {
            org.apache.camel.component.http.HttpComponent http = camel.getComponent(name, org.apache.camel.component.http.HttpComponent.class);
            assertThat(http.getConnectionsPerRoute()).as(name).isEqualTo(CamelHttpTuning.connectionsPerHost(properties));
            assertThat(http.getMaxTotalConnections()).as(name).isEqualTo(3 * CamelHttpTuning.connectionsPerHost(properties));
            assertThat(http.getConnectTimeout()).as(name).isEqualTo(properties.getHttp().getConnectTimeout().toMillis());
            assertThat(http.getConnectionRequestTimeout()).as(name).isEqualTo(properties.getHttp().getConnectTimeout().toMillis());
            assertThat(http.getSoTimeout()).as(name).isEqualTo(properties.getHttp().getResponseTimeout().toMillis());
            assertThat(http.getResponseTimeout()).as(name).isEqualTo(properties.getHttp().getResponseTimeout().toMillis());
        }
    }

    /** Every answer is read whole into memory: one of megabytes (or hundreds) fails the call, not the JVM. */
    @Test
    void anAnswerLargerThanTheLimitFailsTheCall() {
        String subject = uniqueSubject("HUGE");
        String huge = "{\"submitted\":true,\"pad\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}";
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200, huge, Map.of(), 0));
        assertThat(rows.row(id).get("last_error")).isEqualTo(Outcome.SYSTEM_ERROR);
    }

    /**
     * Refused for its declared size, an answer is not read to its end either (a graceful close would read all of it
     * first, to keep the connection: here megabytes at a byte every 50 ms): the connection is shut at once.
     */
    @Test
    void anAnswerRefusedForItsSizeIsNotReadToItsEnd() {
        String subject = uniqueSubject("HUGESLOW");
        String huge = "{\"submitted\":true,\"pad\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}";
        // read to its end, the answer takes 29 hours: the row would stay PROCESSING past submitFailing's 30 s wait
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200, huge, Map.of(), 50));
        assertThat(rows.row(id).get("last_error")).isEqualTo(Outcome.SYSTEM_ERROR);
    }

    /** An answer dripped a byte at a time never ran out of its per-read timeout: the call's deadline ends it. */
    @Test
    void anAnswerDrippedPastTheCallsDeadlineFailsTheCall() {
        String subject = uniqueSubject("DRIP");
        // ~12 s of bytes, each within 1 s, of a success: read to its end the row would be COMPLETED, not FAILED
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200,
                "{\"submitted\":true,\"note\":\"" + "x".repeat(60) + "\"}", Map.of(), 150));
        assertThat(rows.row(id).get("last_error")).as("ended by the deadline, not the drip").isEqualTo(Outcome.SYSTEM_ERROR);
    }

    /**
     * An answer's head is bounded too (max-header-bytes a line, max-headers in all): the client read a head without
     * any bound, so one endless header line, or endless headers, filled the heap before the deadline came.
     */
    @Test
    void aHeaderLineLongerThanTheLimitFailsTheCall() {
        String subject = uniqueSubject("LONGHEAD");
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200,
                "{\"submitted\":true}", Map.of("X-Padding", "x".repeat(64 * 1024)), 0));
        assertThat(rows.row(id).get("last_error")).isEqualTo(Outcome.SYSTEM_ERROR);
    }

    @Test
    void moreHeadersThanTheLimitFailTheCall() {
        String subject = uniqueSubject("MANYHEAD");
        Map<String, String> many = new HashMap<>();
        for (int i = 0; i < 500; i++) {
            many.put("X-Header-" + i, "v");
        }
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200,
                "{\"submitted\":true}", many, 0));
        assertThat(rows.row(id).get("last_error")).isEqualTo(Outcome.SYSTEM_ERROR);
    }

    /** The bounds leave room for real heads: long tokens and cookies, a few dozen headers. */
    @Test
    void aLargeHeadWithinTheLimitsIsRead() {
        String subject = uniqueSubject("BIGHEAD");
        Map<String, String> large = new HashMap<>();
        for (int i = 0; i < 60; i++) {
            large.put("X-Header-" + i, "v".repeat(100));
        }
        large.put("X-Padding", "x".repeat(12 * 1024));
        DownstreamSimulator.Fault fault = answer("POST /survey/dispatch-bundles/" + subject + "/submission", 200,
                "{\"submitted\":true}", large, 0);
        try {
            rows.awaitStatus(client.accept(ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"SUBMIT\"")), "COMPLETED");
        } finally {
            simulator().remove(fault);
        }
    }

    /** No compressed answer was asked for: one (a few kilobytes can unpack to gigabytes) fails the call unread. */
    @Test
    void aCompressedAnswerFailsTheCall() {
        String subject = uniqueSubject("GZIP");
        String patno = "PZ" + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault zipped = answer("GET /legacy/patients/" + patno, 200,
                "{\"patno\":\"" + patno + "\",\"patNm\":\"Kim\",\"mobileNo\":\"010-1234-5678\"}", Map.of("Content-Encoding", "gzip"), 0);
        try {
            String id = client.accept(ServiceClient.message(subject, patno, ""));
            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id).get("last_error")).isEqualTo(Outcome.SYSTEM_ERROR);
        } finally {
            simulator().remove(zipped);
        }
    }

    /**
     * A reply's answer body is not read: only its status says whether the legacy system took it. A compressed or
     * oversized body of a 200 failed the reply, which was then sent again at every retry, each one delivered.
     */
    @Test
    void aReplysStatusAloneDecidesWhateverItsBody() {
        replySent("REPLYZIP", "{\"resultCode\":\"Y\"}", Map.of("Content-Encoding", "gzip"));
        replySent("REPLYBIG", "{\"resultCode\":\"Y\",\"pad\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}", Map.of());
    }

    /** A NOTIFY_SKIPPED reply answered 200 with this body and these headers is recorded SENT. */
    private void replySent(String kind, String body, Map<String, String> headers) {
        String subject = uniqueSubject(kind);
        DownstreamSimulator.Fault answered = answer("POST /legacy/survey-send-results", 200, body, headers, 0);
        try {
            String id = client.accept(ServiceClient.message(subject, "P-" + subject, "\"alimtalkYn\":\"N\""));
            rows.awaitStatus(id, "COMPLETED");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));
        } finally {
            simulator().remove(answered);
        }
    }

    /**
     * A redirect is never followed (no call goes where a downstream points): a system error, not a business refusal.
     * It points at the simulator itself, so a followed redirect would be seen there (and would have answered).
     */
    @Test
    void aRedirectIsASystemError() {
        String subject = uniqueSubject("MOVED");
        String elsewhere = "/survey/moved-" + subject;
        String id = submitFailing(subject, answer("POST /survey/dispatch-bundles/" + subject + "/submission", 302,
                "{\"code\":\"MOVED\",\"message\":\"see elsewhere\"}", Map.of("Location", simulator().baseUrl() + elsewhere), 0));
        assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
        assertThat(simulator().requests()).noneMatch(r -> r.line().contains(elsewhere));
    }

    /**
     * A maintenance page answered 200 to the bundle's POST: nothing was created, so the call fails as a system error
     * and counts against the circuit (the row completed, silently: no reply is owed for a completed row).
     */
    @Test
    void aMarkupPageWithAStatusTheStepAcceptsFailsTheCall() {
        aBundleAnsweredSoFailsAsASystemError(uniqueSubject("MAINT"), 200,
                "\n<!DOCTYPE html><html><body>Down for maintenance</body></html>", Map.of("Content-Type", "text/html"), "markup");
    }

    /**
     * A success status whose answer is not the survey side's (CONTRACT §3: 201 {"dispatchId"}, or 200 when the key
     * exists): a gateway's 204 or 202, a 201 without a dispatchId, a 200 in text. Nothing is known to be created: the call fails as a
     * system error (the row completed silently, no reply owed) and counts against the survey's circuit.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0} \"{1}\"")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "204|``|", "202|`{\"dispatchId\":\"D-9\"}`|", "201|``|", "201|`{}`|", "201|`{\"dispatchId\":\"  \"}`|",
            "201|`{\"dispatchId\":null}`|", "201|`OK`|text/plain", "201|`[\"D-9\"]`|", "201|`{\"dispatchId\":{}}`|",
            "201|`{\"dispatchId\":true}`|", "200|`OK`|text/plain"})
    void aSuccessStatusWithoutTheSurveySidesAnswerFailsTheCall(int status, String body, String contentType) {
        aBundleAnsweredSoFailsAsASystemError(uniqueSubject("NOBUNDLE"), status, body,
                contentType == null ? Map.of() : Map.of("Content-Type", contentType), status == 201 || status == 200 ? "not-an-answer" : "2xx");
    }

    /**
     * The bundle's POST of {@code subject}'s message answered {@code status} {@code body}: the row's first attempt
     * fails as a system error, counted once against the survey as {@code kind}.
     */
    private void aBundleAnsweredSoFailsAsASystemError(String subject, int status, String body, Map<String, String> headers, String kind) {
        double counted = errors("inbox-register-survey-bundle", kind);
        DownstreamSimulator.Fault gateway = simulator().add(new DownstreamSimulator.Fault(s -> s.equals("POST /survey/dispatch-bundles"),
                status, body, 0, headers, 0, request -> request.contains(subject)));
        try {
            String id = client.accept(ServiceClient.message(subject, ""));
            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
        } finally {
            simulator().remove(gateway);
        }
        assertThat(errors("inbox-register-survey-bundle", kind) - counted).as("counted against the survey as " + kind).isEqualTo(1);
    }

    /**
     * A gateway answering every bundle 201 without a dispatchId is the survey side's outage: its circuit opens as for
     * a 5xx (heard as "up", every row was charged to DEAD, each with its DEAD reply).
     */
    @Test
    void bundlesAnsweredWithoutADispatchIdOpenTheSurveysCircuit() {
        String run = uniqueSubject("NOBUNDLES");
        DownstreamSimulator.Fault gateway = simulator().add(new DownstreamSimulator.Fault(s -> s.equals("POST /survey/dispatch-bundles"),
                201, "{}", 0, Map.of(), 0, request -> request.contains(run)));
        try {
            for (int i = 0; i < 5; i++) {
                String id = client.accept(ServiceClient.message(run + "-" + i, ""));
                rows.awaitAttempt(id, 1, "FAILED");
            }
            assertThat(circuits.state("survey")).isEqualTo(DownstreamCircuits.State.OPEN);
        } finally {
            simulator().remove(gateway);
        }
    }

    /** The key's existing bundle: the contract gives a 200 no body, so any JSON (or none) is taken. */
    @org.junit.jupiter.params.ParameterizedTest(name = "\"{0}\"")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", "{\"status\":\"exists\"}", "\"exists\""})
    void aBundlesTwoHundredIsTheKeysExistingBundleWhateverItsJson(String body) {
        String subject = uniqueSubject("BUNDLE200");
        DownstreamSimulator.Fault exists = simulator().add(new DownstreamSimulator.Fault(s -> s.equals("POST /survey/dispatch-bundles"),
                200, body, 0, Map.of(), 0, request -> request.contains(subject)));
        try {
            String id = client.accept(ServiceClient.message(subject, ""));
            rows.awaitStatus(id, "COMPLETED");
        } finally {
            simulator().remove(exists);
        }
    }

    /**
     * A lookup's 200 that is not the JSON its step expects (no body, a text "OK", null, the other shape), a guest
     * search's 200 or a guest's 201 without its guestId: not the API's answer. The call fails as a system error counted against the circuit (kind
     * not-an-answer); refused by the step's own check after the circuit had heard "up", a gateway answering so charged
     * every row to DEAD while the circuit stayed closed.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0} {1} \"{2}\"")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "GET /legacy/patients/|200|``|inbox-register-legacy-patient|not-an-answer",
            "GET /legacy/patients/|200|`OK`|inbox-register-legacy-patient|not-an-answer",
            "GET /legacy/patients/|200|`null`|inbox-register-legacy-patient|not-an-answer",
            "GET /legacy/surveys/|200|`{\"consents\":[]}`|inbox-register-legacy-consents|not-an-answer",
            "GET /account/guests|200|`{}`|inbox-register-account-guest-find|not-an-answer",
            "GET /account/guests|200|`[{\"guestId\":\"G-1\"}]`|inbox-register-account-guest-find|not-an-answer",
            "POST /account/guests|201|`{}`|inbox-register-account-guest-create|not-an-answer",
            "POST /account/guests|409|`Conflict`|inbox-register-account-guest-create|gateway-4xx",
            "POST /account/guests|201|`{\"guestId\":true}`|inbox-register-account-guest-create|not-an-answer"})
    void aSuccessAnswerThatIsNotTheApisFailsTheCallAgainstTheCircuit(String call, int status, String body, String step, String kind) {
        String subject = uniqueSubject("NOTANSWER");
        String patno = "PNA" + Math.abs(subject.hashCode());
        String srvyNo = "SNA" + Math.abs(subject.hashCode());
        String path = call.contains("/account/") ? call : call + (call.contains("patients") ? patno : srvyNo + "/consents");
        double counted = errors(step, kind);
        DownstreamSimulator.Fault gateway = simulator().add(new DownstreamSimulator.Fault(s -> s.equals(path), status, body, 0,
                Map.of(), 0, request -> !call.contains("/account/") || request.contains(patno)));
        try {
            String id = client.accept(ServiceClient.message(subject, patno, "\"srvyNo\":\"" + srvyNo + "\""));
            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
            assertThat(client.ops("/ops/inbox/" + id).json().get("attemptHistory").get(0).get("reason").asText())
                    .startsWith("system error at " + step + " (");
        } finally {
            simulator().remove(gateway);
        }
        assertThat(errors(step, kind) - counted).isEqualTo(1);
        assertThat(simulator().bundleRequests(subject)).isEmpty();
    }

    /**
     * The guest creation's 409 with the contract's {code,message} and no guestId is the account system refusing, not
     * "it exists": a business error with its message, which does not count against the circuit; a 409 naming the
     * existing guest (a number is an id too) is used.
     */
    @Test
    void aGuestCreationsConflictIsARefusalUnlessItNamesTheGuest() {
        String refusedSubject = uniqueSubject("GUEST409");
        String refusedPatno = "PG409" + Math.abs(refusedSubject.hashCode());
        double counted = errors("inbox-register-account-guest-create", "not-an-answer");
        DownstreamSimulator.Fault refusal = simulator().add(new DownstreamSimulator.Fault(s -> s.equals("POST /account/guests"),
                409, "{\"code\":\"DUPLICATE_MOBILE\",\"message\":\"mobile number registered to another guest\"}", 0,
                Map.of(), 0, request -> request.contains(refusedPatno)));
        String existingSubject = uniqueSubject("GUEST409N");
        String existingPatno = "PG409N" + Math.abs(existingSubject.hashCode());
        DownstreamSimulator.Fault exists = simulator().add(new DownstreamSimulator.Fault(s -> s.equals("POST /account/guests"),
                409, "{\"guestId\":7}", 0, Map.of(), 0, request -> request.contains(existingPatno)));
        try {
            String refused = client.accept(ServiceClient.message(refusedSubject, refusedPatno, ""));
            rows.awaitAttempt(refused, 1, "FAILED");
            assertThat(rows.row(refused)).containsEntry("last_error", "mobile number registered to another guest");
            String used = client.accept(ServiceClient.message(existingSubject, existingPatno, ""));
            rows.awaitStatus(used, "COMPLETED");
        } finally {
            simulator().remove(refusal);
            simulator().remove(exists);
        }
        assertThat(errors("inbox-register-account-guest-create", "not-an-answer") - counted).isZero();
        assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.CLOSED);
        assertThat(simulator().bundleRequests(existingSubject)).singleElement()
                .satisfies(bundle -> assertThat(bundle.path("guestId").asText()).isEqualTo("7"));
    }

    private double errors(String call, String kind) {
        io.micrometer.core.instrument.Counter counter = meters.find("adapter.downstream.errors").tag("call", call)
                .tag("kind", kind).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * A gateway's 404 page or text for the guest search (a status that step accepts: "no guest yet") is not the
     * account system's answer: no guest account is created on its word.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
            "<html><h1>404 Not Found</h1></html>|text/html", "404 page not found|text/plain"})
    void aGatewaysNotFoundPageIsNoAnswer(String body, String contentType) {
        String subject = uniqueSubject("GW404");
        String patno = "PGW" + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault page = answer("GET /account/guests", 404, body, Map.of("Content-Type", contentType), 0);
        try {
            String id = client.accept(ServiceClient.message(subject, patno, ""));
            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
        } finally {
            simulator().remove(page);
        }
        assertThat(simulator().guestOf(patno)).as("guest created").isNull();
    }

    /**
     * A rate limiter's 429 (here with a {@code message}, no {@code code}) says "not now", nothing about the message:
     * a system error that counts against the circuit, which opens after failure-threshold different requests. As a
     * refusal every row went DEAD with "API rate limit exceeded" as its business reason, the circuit hearing "up".
     */
    @Test
    void aRateLimitIsASystemErrorThatOpensTheCircuit() {
        String patients = "PRL" + Math.abs(uniqueSubject("RL").hashCode());
        DownstreamSimulator.Fault limited = simulator().add(new DownstreamSimulator.Fault(
                s -> s.startsWith("GET /legacy/patients/" + patients), 429, "{\"message\":\"API rate limit exceeded\"}",
                0, Map.of("Retry-After", "60"), 0));
        try {
            for (int i = 0; i < 5; i++) {
                String id = client.accept(ServiceClient.message(uniqueSubject("RATELIMIT"), patients + "-" + i, ""));
                rows.awaitAttempt(id, 1, "FAILED");
                assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
            }
        } finally {
            simulator().remove(limited);
        }
        assertThat(circuits.isOpen("legacy")).as("five patients rate-limited").isTrue();
    }

    /** A byte order mark before the JSON (RFC 8259 forbids it; some servers send one) does not make it unreadable. */
    @Test
    void anAnswerWithAByteOrderMarkIsRead() {
        String subject = uniqueSubject("BOM");
        String srvyNo = "SBOM" + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault bom = answer("GET /legacy/surveys/" + srvyNo + "/consents", 200, "\uFEFF[{\"consentCd\":\"C1\"}]",
                Map.of(), 0);
        try {
            rows.awaitStatus(client.accept(ServiceClient.message(subject, "\"srvyNo\":\"" + srvyNo + "\"")), "COMPLETED");
        } finally {
            simulator().remove(bom);
        }
        assertThat(simulator().bundleRequests(subject)).singleElement()
                .satisfies(bundle -> assertThat(bundle.path("consents").path(0).path("consentCd").asText()).isEqualTo("C1"));
    }

    /**
     * A patient answer that is not the record's JSON object: no guest account is created from it (read as "no name,
     * no mobile", a permanent guest without either was created, and later SENDs of the patient reused it).
     */
    @Test
    void aPatientAnswerOfTheWrongShapeCreatesNoGuest() {
        aPatientAnswerIsRefusedAndCreatesNoGuest("SHAPE", patno -> "[]", "answer is not a JSON object (HTTP 200)");
    }

    /**
     * The patient lookup answers {@code body(patno)}: the row fails as a system error blamed on the lookup that
     * answered it (not on the account step that would have used it), with {@code reason}, and no guest is created.
     */
    private void aPatientAnswerIsRefusedAndCreatesNoGuest(String tag, java.util.function.UnaryOperator<String> body, String reason) {
        String subject = uniqueSubject(tag);
        String patno = "P" + tag + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault answered = answer("GET /legacy/patients/" + patno, 200, body.apply(patno), Map.of(), 0);
        try {
            String id = client.accept(ServiceClient.message(subject, patno, ""));
            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id)).containsEntry("last_error", Outcome.SYSTEM_ERROR);
            assertThat(client.ops("/ops/inbox/" + id).json().get("attemptHistory").get(0).get("reason").asText())
                    .isEqualTo("system error at inbox-register-legacy-patient (legacy): " + reason);
        } finally {
            simulator().remove(answered);
        }
        assertThat(simulator().guestOf(patno)).as("guest created").isNull();
    }

    /**
     * A patient answer naming another patient (a caching proxy or a legacy fault mixing two lookups) creates no
     * guest: its name and mobile would have become this patient's guest account, and this patient's survey link
     * would have gone to the other patient's phone.
     */
    @Test
    void aPatientAnswerNamingAnotherPatientCreatesNoGuest() {
        aPatientAnswerIsRefusedAndCreatesNoGuest("OTHERPAT", patno -> "{\"patno\":\"" + patno
                + "9\",\"patNm\":\"Other Person\",\"mobileNo\":\"010-9999-0000\"}", "patient answer names another patient");
    }

    /**
     * A patient answer writing the message's patno otherwise is the patient's: a JSON number (it keeps no leading
     * zeros), another width or case, spaces around it. Compared as exact text, a legacy system that answers patno as
     * a number would have sent every SEND to DEAD.
     */
    @Test
    void aPatientAnswerWritingThePatnoOtherwiseIsThePatients() {
        String subject = uniqueSubject("SAMEPAT");
        String digits = Long.toString(Math.abs(subject.hashCode()) % 1_000_000 + 1);
        String patno = "00" + digits;
        DownstreamSimulator.Fault number = answer("GET /legacy/patients/" + patno, 200,
                "{\"patno\":" + digits + ",\"patNm\":\"Kim\",\"mobileNo\":\"010-1234-5678\"}", Map.of(), 0);
        try {
            rows.awaitStatus(client.accept(ServiceClient.message(subject, patno, "")), "COMPLETED");
        } finally {
            simulator().remove(number);
        }
        assertThat(simulator().guestOf(patno)).as("guest created from the record").isNotNull();
        com.fasterxml.jackson.databind.node.JsonNodeFactory json = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
        assertThat(RegistrationSteps.samePatno(json.textNode(" \uFF50\uFF10\uFF10\uFF11 "), "P001")).isTrue();
        assertThat(RegistrationSteps.samePatno(json.numberNode(7), "007")).isTrue();
        assertThat(RegistrationSteps.samePatno(json.numberNode(7), "P7")).isFalse();
        assertThat(RegistrationSteps.samePatno(json.textNode("P0019"), "P001")).isFalse();
    }

    /**
     * An answer's charset is not the next request's: the guest account answering ISO-8859-1 must not turn the
     * dispatch bundle's Hangul codes into '?' (created under the right Idempotency-Key, no retry would repair it).
     * camel-http resets the exchange's charset from each answer's Content-Type and the requests say UTF-8: a guard.
     */
    @Test
    void anAnswersCharsetIsNotTheNextRequests() {
        String subject = uniqueSubject("CHARSET");
        DownstreamSimulator.Fault latin = answer("POST /account/guests", 201, "{\"guestId\":\"G-LATIN\"}",
                Map.of("Content-Type", "application/json;charset=ISO-8859-1"), 0);
        try {
            String id = client.accept(ServiceClient.message(subject, "PCS" + Math.abs(subject.hashCode()), "\"groupCd\":\"한글그룹\""));
            rows.awaitStatus(id, "COMPLETED");
        } finally {
            simulator().remove(latin);
        }
        assertThat(simulator().bundleRequests(subject)).singleElement()
                .satisfies(bundle -> assertThat(bundle.path("groupCd").asText()).isEqualTo("한글그룹"));
    }

    /**
     * A cookie one answer sets is not sent with later calls: the client is one per downstream and pod, shared by
     * every patient's calls (a session cookie of one patient's lookup went with the next patient's).
     */
    @Test
    void aCookieOneAnswerSetsIsNotSentWithTheNextCalls() {
        String first = uniqueSubject("COOKIE");
        String patno = "PK" + Math.abs(first.hashCode());
        DownstreamSimulator.Fault cookie = answer("GET /legacy/patients/" + patno, 200,
                "{\"patno\":\"" + patno + "\",\"patNm\":\"Kim\",\"mobileNo\":\"010-1234-5678\"}",
                Map.of("Set-Cookie", "SESSION=s3cret; Path=/"), 0);
        try {
            rows.awaitStatus(client.accept(ServiceClient.message(first, patno, "")), "COMPLETED");
        } finally {
            simulator().remove(cookie);
        }
        int before = simulator().requests().size();
        String next = uniqueSubject("COOKIE");
        rows.awaitStatus(client.accept(ServiceClient.message(next, "PK2" + Math.abs(next.hashCode()), "")), "COMPLETED");

        List<DownstreamSimulator.Request> after = simulator().requests().subList(before, simulator().requests().size());
        assertThat(after).as("the next patient's calls").anyMatch(r -> r.line().startsWith("GET /legacy/patients/"))
                .allSatisfy(r -> assertThat(r.headers().keySet()).as(r.line()).doesNotContain("Cookie"));
    }
}
