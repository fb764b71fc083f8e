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

/** Half-open lets a bounded number of trials through (each charged by the caller); open lets none. */
class DownstreamCircuitsTest {

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
        DownstreamCircuits circuits = threeFailuresOpenFor30Seconds(meters, clock);

        for (int i = 0; i < 3; i++) {
            assertThat(circuits.admit("legacy")).isTrue();
            circuits.recordFailure("legacy", "inbox-register-legacy-patient");
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(circuits.admit("legacy")).isFalse();
        assertThat(circuits.admit("survey")).isTrue();
        circuits.recordFailure("legacy", "inbox-register-legacy-patient"); // a call made before it opened fails late: still the same opening
        assertThat(openings(meters, "legacy")).isEqualTo(1);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).as("trials of this phase taken").isFalse();

        circuits.recordFailure("legacy", "inbox-register-legacy-patient");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "legacy")).as("a failed trial re-opens: counted (the alert counts openings)").isEqualTo(2);
        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("legacy")).as("a new phase, new trials").isTrue();
        circuits.recordSuccess("legacy", "inbox-register-legacy-patient");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        for (int i = 0; i < 10; i++) {
            assertThat(circuits.admit("legacy")).isTrue();
        }
    }

    /**
     * One call of a downstream that keeps failing while another answers (the account system's guest creation down,
     * its search up: every new patient's search answered 404 before the creation failed) opens the circuit after
     * failure-threshold failures of that call: the search's success cleared the downstream's count each time, so it
     * never opened and every row was charged its attempts to DEAD. A success closes it (a trial passed), but the
     * failing call's count stays: its next failure re-opens it at once.
     */
    @Test
    void oneCallFailingWhileAnotherAnswersOpensTheCircuit() {
        MovableClock clock = new MovableClock();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        DownstreamCircuits circuits = threeFailuresOpenFor30Seconds(meters, clock);
        for (int i = 0; i < 2; i++) {
            circuits.recordSuccess("account", "inbox-register-account-guest-find");
            circuits.recordFailure("account", "inbox-register-account-guest-create");
            assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.CLOSED);
        }
        circuits.recordSuccess("account", "inbox-register-account-guest-find");
        circuits.recordFailure("account", "inbox-register-account-guest-create");
        assertThat(circuits.state("account")).as("the third failure of the creation").isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(circuits.admit("account")).isFalse();

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("account")).as("a trial").isTrue();
        circuits.recordSuccess("account", "inbox-register-account-guest-find");
        assertThat(circuits.state("account")).as("the search answered: closed").isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.recordFailure("account", "inbox-register-account-guest-create");
        assertThat(circuits.state("account")).as("the creation still fails: open again at once").isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "account")).isEqualTo(2);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        circuits.recordSuccess("account", "inbox-register-account-guest-create");
        circuits.recordFailure("account", "inbox-register-account-guest-create");
        assertThat(circuits.state("account")).as("the creation answered once: its count starts again").isEqualTo(DownstreamCircuits.State.CLOSED);
        circuits.reset("account");
        assertThat(circuits.state("account")).isEqualTo(DownstreamCircuits.State.CLOSED);
    }

    /** Circuits opened by 3 failures in a row, open for 30 s, on the test's clock. */
    private static DownstreamCircuits threeFailuresOpenFor30Seconds(SimpleMeterRegistry meters, Clock clock) {
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
        circuits.recordFailure("legacy", "inbox-register-legacy-patient");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(29).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(clock.instant()).isEqualTo(Instant.parse("2026-10-25T00:59:31Z"));
    }
}
