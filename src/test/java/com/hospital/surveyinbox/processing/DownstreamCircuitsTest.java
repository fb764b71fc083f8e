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
        DownstreamCircuits circuits = new DownstreamCircuits(TestProperties.bind(Map.of(
                "adapter.circuit.failure-threshold", "3", "adapter.circuit.open-duration", "PT30S")), meters, clock);

        for (int i = 0; i < 3; i++) {
            assertThat(circuits.admit("legacy")).isTrue();
            circuits.recordFailure("legacy");
        }
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(circuits.admit("legacy")).isFalse();
        assertThat(circuits.admit("survey")).isTrue();
        circuits.recordFailure("legacy"); // a call made before it opened fails late: still the same opening
        assertThat(openings(meters, "legacy")).isEqualTo(1);

        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).isTrue();
        assertThat(circuits.admit("legacy")).as("trials of this phase taken").isFalse();

        circuits.recordFailure("legacy");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        assertThat(openings(meters, "legacy")).as("a failed trial re-opens: counted (the alert counts openings)").isEqualTo(2);
        clock.now = clock.now.plus(Duration.ofSeconds(31));
        assertThat(circuits.admit("legacy")).as("a new phase, new trials").isTrue();
        circuits.recordSuccess("legacy");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.CLOSED);
        for (int i = 0; i < 10; i++) {
            assertThat(circuits.admit("legacy")).isTrue();
        }
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
        circuits.recordFailure("legacy");
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(29).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.OPEN);
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(circuits.state("legacy")).isEqualTo(DownstreamCircuits.State.HALF_OPEN);
        assertThat(clock.instant()).isEqualTo(Instant.parse("2026-10-25T00:59:31Z"));
    }
}
