package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Open lets no call through; half-open a bounded number of trials (each charged by the caller), and, when one call's
 * failures opened it, every other call.
 */
class DownstreamCircuitsTest {

    private static final String PATIENT = "inbox-register-legacy-patient";
    private static final String CONSENTS = "inbox-register-legacy-consents";
    private static final String GUEST_FIND = "inbox-register-account-guest-find";
    private static final String GUEST_CREATE = "inbox-register-account-guest-create";

    /** A clock the test moves. */
    static final class MovableClock extends Clock {
        Instant now = Instant.parse("2026-12-01T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void halfOpenAdmitsAtMostThresholdTrialsAndAFailedTrialReopens() {
        MovableClock clock = new MovableClock();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        DownstreamCircuits circuits = thresholdThree(meters, clock);

        for (int i = 0; i < 3; i++) {
            assertThat(circuits.admit("legacy", PATIENT)).isTrue();
            circuits.recordFailure("legacy", PATIENT, i);
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(circuits.admit("legacy", PATIENT)).isFalse();
        assertThat(circuits.admit("survey", "inbox-register-survey-bundle")).isTrue();
        circuits.recordFailure("legacy", PATIENT, 7); // a call made before it opened fails late: still the same opening
        assertThat(openings(meters, "legacy")).isEqualTo(1);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(circuits.admit("legacy", PATIENT)).isTrue();
        assertThat(circuits.admit("legacy", PATIENT)).isTrue();
        assertThat(circuits.admit("legacy", PATIENT)).isTrue();
        assertThat(circuits.admit("legacy", PATIENT)).as("trials of this phase taken").isFalse();

        circuits.recordFailure("legacy", PATIENT, 8);
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "legacy")).as("a failed trial re-opens: counted (the alert counts openings)").isEqualTo(2);
        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("legacy", PATIENT)).as("a new phase, new trials").isTrue();
        circuits.recordSuccess("legacy", PATIENT);
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        for (int i = 0; i < 10; i++) {
            assertThat(circuits.admit("legacy", PATIENT)).isTrue();
        }
    }

    /**
     * One call of a downstream failing for every request while another call answers (the account system's guest
     * creation down, its search up: each new patient's search answered 404 before its creation failed) opens the
     * circuit after failure-threshold different requests: the search's answer cleared the downstream's count each
     * time, so it never opened and every row was charged its attempts to DEAD. Opened so, only the creation's answer
     * closes it and only the creation has trials: the search answered all along (let through before it opened and
     * answering after, or while half-open) and goes on being let through.
     */
    @Test
    void oneCallFailingForDifferentRequestsWhileAnotherAnswersOpensTheCircuit() {
        MovableClock clock = new MovableClock();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        DownstreamCircuits circuits = thresholdThree(meters, clock);
        for (int patient = 0; patient < 2; patient++) {
            circuits.recordSuccess("account", GUEST_FIND);
            circuits.recordFailure("account", GUEST_CREATE, patient);
            assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.CLOSED);
        }
        circuits.recordSuccess("account", GUEST_FIND);
        circuits.recordFailure("account", GUEST_CREATE, 2);
        assertThat(circuits.state("account")).as("a third patient's creation failed").isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(circuits.admit("account", GUEST_FIND)).isFalse();

        circuits.recordSuccess("account", GUEST_FIND); // a search let through before it opened answers just after
        assertThat(circuits.state("account")).as("the search answering does not close it").isEqualTo(DownstreamCircuits.State.OPEN);

        circuits.recordFailure("account", GUEST_FIND, 9); // a search made before it opened times out just after
        assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.OPEN);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        circuits.recordFailure("account", GUEST_FIND, 10); // one search failing while half-open: not the downstream
        assertThat(circuits.state("account")).as("two failures of another call do not re-open it").isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(openings(meters, "account")).isEqualTo(1);
        for (int search = 0; search < 10; search++) { // patients with a guest account: their rows complete
            assertThat(circuits.admit("account", GUEST_FIND)).as("half-open: the search is no trial").isTrue();
            circuits.recordSuccess("account", GUEST_FIND);
        }
        assertThat(circuits.state("account")).as("the search answering does not close it").isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        for (int trial = 0; trial < 3; trial++) {
            assertThat(circuits.admit("account", GUEST_CREATE)).as("a trial of the creation").isTrue();
        }
        assertThat(circuits.admit("account", GUEST_CREATE)).as("this phase's trials taken").isFalse();
        assertThat(circuits.admit("account", GUEST_FIND)).as("the search still let through").isTrue();
        circuits.recordFailure("account", GUEST_CREATE, 3);
        assertThat(circuits.state("account")).as("the creation still fails: open again").isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "account")).isEqualTo(2);
        circuits.recordFailure("account", GUEST_CREATE, 4); // the phase's other two trials fail late
        circuits.recordFailure("account", GUEST_CREATE, 5);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        circuits.recordFailure("account", GUEST_FIND, 11);
        assertThat(circuits.state("account")).as("the creation's failures are not the search's: one search failing does not "
                + "make it the downstream's").isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        circuits.recordFailure("account", GUEST_FIND, 12);
        circuits.recordFailure("account", GUEST_FIND, 13);
        assertThat(circuits.state("account")).as("three searches failing in a row: the account system is down").isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "account")).isEqualTo(3);
        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("account", GUEST_FIND)).as("the downstream's now: the search is a trial").isTrue();
        circuits.recordSuccess("account", GUEST_FIND);
        assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.CLOSED);
        for (int patient = 20; patient < 23; patient++) {
            circuits.recordFailure("account", GUEST_CREATE, patient);
            circuits.recordSuccess("account", GUEST_FIND);
        }
        assertThat(circuits.state("account")).as("the creation's new failures open it again").isEqualTo(DownstreamCircuits.State.OPEN);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("account", GUEST_CREATE)).as("a trial of the creation").isTrue();
        circuits.recordSuccess("account", GUEST_CREATE);
        assertThat(circuits.state("account")).as("the creation answered: closed").isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.recordFailure("account", GUEST_CREATE, 3);
        assertThat(circuits.state("account")).as("the creation answered once: its record starts again").isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.reset("account");
        circuits.recordFailure("account", GUEST_CREATE, 4);
        circuits.recordFailure("account", GUEST_CREATE, 5);
        assertThat(circuits.state("account")).as("reset forgot the creation's failures").isEqualTo(DownstreamCircuits.State.CLOSED);
    }

    /**
     * A call's record forgets a request that has not failed for ten open-durations: failures weeks apart (one
     * survey's lookup that always fails, another now and then) never add up to an opening, while a row failing on
     * its retries keeps its request in the record.
     */
    @Test
    void aCallsRecordForgetsRequestsThatStoppedFailing() {
        MovableClock clock = new MovableClock();
        DownstreamCircuits circuits = thresholdThree(new SimpleMeterRegistry(), clock);
        for (int survey = 0; survey < 6; survey++) {
            circuits.recordFailure("legacy", CONSENTS, survey);
            circuits.recordSuccess("legacy", PATIENT);
            clock.now = clock.now.plus(Duration.ofMinutes(6));
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);

        circuits.recordFailure("legacy", CONSENTS, 100);
        for (int minute = 0; minute < 8; minute++) { // the first row's retries, a minute apart
            clock.now = clock.now.plus(Duration.ofMinutes(1));
            circuits.recordFailure("legacy", CONSENTS, 100);
            circuits.recordSuccess("legacy", PATIENT);
        }
        circuits.recordFailure("legacy", CONSENTS, 101);
        circuits.recordSuccess("legacy", PATIENT);
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.recordFailure("legacy", CONSENTS, 102);
        assertThat(circuits.state("legacy")).as("three rows failing, the first still retrying").isEqualTo(DownstreamCircuits.State.OPEN);
    }

    /** Circuits disabled: nothing opens, and no opening is counted (the alert counts openings). */
    @Test
    void disabledCircuitsNeitherOpenNorCountOpenings() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        DownstreamCircuits circuits = new DownstreamCircuits(TestProperties.bind(Map.of("adapter.circuit.enabled", "false",
                "adapter.circuit.failure-threshold", "3")), meters, new MovableClock());
        for (int request = 0; request < 10; request++) {
            circuits.recordFailure("legacy", PATIENT, request);
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        assertThat(circuits.isOpen("legacy")).isFalse();
        assertThat(openings(meters, "legacy")).isZero();
    }

    /**
     * The same request failing again and again is a failing request, not a failing downstream: one survey whose
     * consent lookup always fails (the same GET for each of its messages; other surveys' lists come from the cache, so
     * that call rarely answers) must not open the legacy circuit while the patient lookups answer in between.
     */
    @Test
    void oneRequestFailingAgainAndAgainDoesNotOpenTheCircuit() {
        DownstreamCircuits circuits = thresholdThree(new SimpleMeterRegistry(), new MovableClock());
        int theSurveysLookup = DownstreamCalls.fingerprint("http://legacy", "/surveys/S1/consents", null, null);
        for (int message = 0; message < 20; message++) {
            circuits.recordFailure("legacy", CONSENTS, theSurveysLookup, message); // each message of that survey
            circuits.recordSuccess("legacy", PATIENT); // another message's patient lookup
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.recordFailure("legacy", CONSENTS, DownstreamCalls.fingerprint("http://legacy", "/surveys/S2/consents", null, null));
        circuits.recordSuccess("legacy", PATIENT);
        circuits.recordFailure("legacy", CONSENTS, DownstreamCalls.fingerprint("http://legacy", "/surveys/S3/consents", null, null));
        assertThat(circuits.state("legacy")).as("three surveys' lookups failing: the lookup is down").isEqualTo(DownstreamCircuits.State.OPEN);

        circuits.recordSuccess("legacy", PATIENT);
        assertThat(circuits.state("legacy")).as("opened by the lookup: the patient call answering does not close it")
                .isEqualTo(DownstreamCircuits.State.OPEN);
        circuits.recordSuccess("legacy", CONSENTS); // another survey's lookup answered (made before it opened)
        for (int message = 0; message < 20; message++) {
            circuits.recordFailure("legacy", CONSENTS, theSurveysLookup, 100 + message);
            circuits.recordSuccess("legacy", PATIENT);
        }
        assertThat(circuits.state("legacy")).as("the lookup answered: its record starts again, and the one survey does not re-open it")
                .isEqualTo(DownstreamCircuits.State.CLOSED);
    }

    /**
     * A quiet night: one row's request fails on each of its retries and nothing else is called in between. That is a
     * failing request, not an outage: the circuit stays closed (it opened at the row's last attempt, held the next
     * rows uncharged for open-duration and, for legacy, the row's own DEAD reply); a second request failing in the
     * same run is an outage and opens it.
     */
    @Test
    void oneMessagesRetriesFailingWithNothingInBetweenDoNotOpenTheCircuit() {
        DownstreamCircuits circuits = thresholdThree(new SimpleMeterRegistry(), new MovableClock());
        int theRowsBundle = DownstreamCalls.fingerprint("http://survey", "/dispatch-bundles", null, "{\"srvyDrawupNo\":\"D-1\"}");
        for (int attempt = 0; attempt < 10; attempt++) {
            circuits.recordFailure("survey", "inbox-register-survey-bundle", theRowsBundle, "D-1".hashCode());
        }
        assertThat(circuits.state("survey")).isEqualTo(DownstreamCircuits.State.CLOSED);
        assertThat(circuits.admit("survey", "inbox-register-survey-bundle")).isTrue();

        circuits.recordFailure("survey", "inbox-register-survey-submission",
                DownstreamCalls.fingerprint("http://survey", "/dispatch-bundles/D-2/submission", null, null), "D-2".hashCode());
        assertThat(circuits.state("survey")).as("another message failing in the same run: the survey system is down")
                .isEqualTo(DownstreamCircuits.State.OPEN);
    }

    /**
     * The legacy system down while one survey makes most of the traffic (its consent list out of the cache): every
     * SEND fails at the same request, the survey's consent lookup. Many messages failing are an outage whatever they
     * ask: the circuit opens (told apart by request, every row was charged to DEAD with its DEAD reply).
     */
    @Test
    void manyMessagesFailingOnOneSharedRequestOpenTheCircuit() {
        DownstreamCircuits circuits = thresholdThree(new SimpleMeterRegistry(), new MovableClock());
        int theSurveysLookup = DownstreamCalls.fingerprint("http://legacy", "/surveys/S1/consents", null, null);
        circuits.recordFailure("legacy", CONSENTS, theSurveysLookup, "D-1".hashCode());
        circuits.recordFailure("legacy", CONSENTS, theSurveysLookup, "D-2".hashCode());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.recordFailure("legacy", CONSENTS, theSurveysLookup, "D-3".hashCode());
        assertThat(circuits.state("legacy")).as("three messages failing in a row").isEqualTo(DownstreamCircuits.State.OPEN);
    }

    /**
     * A call the circuit refuses is never answered (no after()): the answer its route declared for it (answerIs,
     * createdAnswerNames) must not hold the exchange's next call to it, e.g. the legacy reply, answered 200 with no body.
     */
    @Test
    void aRefusedCallLeavesNoDeclaredAnswerForTheExchangesNextCall() throws Exception {
        com.hospital.surveyinbox.config.AdapterProperties properties = TestProperties.bind(Map.of(
                "adapter.circuit.failure-threshold", "3", "adapter.circuit.open-duration", "PT30S"));
        DownstreamCircuits circuits = new DownstreamCircuits(properties, new SimpleMeterRegistry(), new MovableClock());
        DownstreamCalls calls = new DownstreamCalls(properties, circuits, new SimpleMeterRegistry(),
                new com.fasterxml.jackson.databind.ObjectMapper());
        for (int request = 0; request < 3; request++) {
            circuits.recordFailure("legacy", PATIENT, request);
        }
        org.apache.camel.Exchange exchange = new org.apache.camel.support.DefaultExchange(new org.apache.camel.impl.DefaultCamelContext());
        exchange.setProperty(org.apache.camel.ExchangePropertyKey.INTERCEPTED_ENDPOINT, "http://localhost:1/legacy");
        exchange.getMessage().setHeader(org.apache.camel.Exchange.HTTP_PATH, "/patients/P1");
        exchange.setProperty(org.apache.camel.ExchangePropertyKey.STEP_ID, PATIENT);
        exchange.setProperty(DownstreamCalls.ANSWER_IS, "object");
        exchange.setProperty(DownstreamCalls.CREATED_NAMES, "guestId");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> calls.before(exchange)).isInstanceOf(CircuitOpenException.class);

        // the exchange's next call: the reply to the legacy system (exempt from the circuit), its 200 without a body
        exchange.setProperty(DownstreamCalls.CIRCUIT_EXEMPT, true);
        exchange.setProperty(org.apache.camel.ExchangePropertyKey.STEP_ID, null);
        exchange.getMessage().setHeader(org.apache.camel.Exchange.HTTP_PATH, "/survey-send-results");
        calls.before(exchange);
        exchange.getMessage().setHeader(org.apache.camel.Exchange.HTTP_RESPONSE_CODE, 201);
        exchange.getMessage().setBody(null);
        calls.after(exchange);
        assertThat(exchange.getException()).isNull();
    }

    /** A route declaring an answer shape the interceptor does not know fails its call: never a weaker check. */
    @Test
    void anUnknownDeclaredAnswerShapeFailsTheCall() {
        com.hospital.surveyinbox.config.AdapterProperties properties = TestProperties.bind(Map.of());
        DownstreamCalls calls = new DownstreamCalls(properties, new DownstreamCircuits(properties, new SimpleMeterRegistry(),
                new MovableClock()), new SimpleMeterRegistry(), new com.fasterxml.jackson.databind.ObjectMapper());
        org.apache.camel.Exchange exchange = new org.apache.camel.support.DefaultExchange(new org.apache.camel.impl.DefaultCamelContext());
        exchange.setProperty(org.apache.camel.ExchangePropertyKey.INTERCEPTED_ENDPOINT, "http://localhost:1/legacy");
        exchange.setProperty(DownstreamCalls.ANSWER_IS, "list");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> calls.before(exchange))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("answerIs must be one of");
    }

    /** Requests differ by path, query or body; the same request sent again has the same fingerprint. */
    @Test
    void aRequestsFingerprintTellsPathQueryAndBodyApart() {
        int create = DownstreamCalls.fingerprint("http://account", "/guests", null, "{\"patno\":\"1\"}");
        assertThat(DownstreamCalls.fingerprint("http://account", "/guests", null, "{\"patno\":\"1\"}")).isEqualTo(create);
        assertThat(DownstreamCalls.fingerprint("http://account", "/guests", null, "{\"patno\":\"1\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isNotEqualTo(DownstreamCalls.fingerprint("http://account", "/guests", null, "{\"patno\":\"2\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertThat(DownstreamCalls.fingerprint("http://account", "/guests", null, "{\"patno\":\"2\"}")).isNotEqualTo(create);
        assertThat(DownstreamCalls.fingerprint("http://account", "/guests", "patno=1", null))
                .isNotEqualTo(DownstreamCalls.fingerprint("http://account", "/guests", "patno=2", null));
        assertThat(DownstreamCalls.fingerprint("http://legacy", "/patients/1", null, null))
                .isNotEqualTo(DownstreamCalls.fingerprint("http://legacy", "/patients/2", null, null));
    }

    /** Circuits that open after 3 failures and stay open 30 s. */
    private static DownstreamCircuits thresholdThree(SimpleMeterRegistry meters, Clock clock) {
        return new DownstreamCircuits(TestProperties.bind(Map.of(
                "adapter.circuit.failure-threshold", "3", "adapter.circuit.open-duration", "PT30S")), meters, clock);
    }

    private static double openings(SimpleMeterRegistry meters, String downstream) {
        return meters.get("adapter.circuit.opened").tag("downstream", downstream).counter().count();
    }

    /**
     * The service's circuits are timed on the monotonic clock: a step back of the pod's wall clock (NTP correcting
     * minutes at once) held an open circuit open for the length of the step, every row needing that downstream
     * deferred and no trial call let through while it answered again.
     */
    @Test
    void theServicesCircuitsAreTimedOnTheMonotonicClock() {
        DownstreamCircuits service = new DownstreamCircuits(TestProperties.bind(Map.of()), new SimpleMeterRegistry());
        assertThat(service.clock()).isInstanceOf(com.hospital.surveyinbox.config.MonotonicClock.class);

        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong(-5_000_000_000L);
        com.hospital.surveyinbox.config.MonotonicClock clock =
                new com.hospital.surveyinbox.config.MonotonicClock(Instant.parse("2026-10-25T00:59:00Z"), nanos::get);
        DownstreamCircuits circuits = new DownstreamCircuits(TestProperties.bind(Map.of(
                "adapter.circuit.failure-threshold", "1", "adapter.circuit.open-duration", "PT30S")), new SimpleMeterRegistry(), clock);
        circuits.recordFailure("legacy", PATIENT, 1);
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(29).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(clock.instant()).isEqualTo(Instant.parse("2026-10-25T00:59:31Z"));
    }
}
