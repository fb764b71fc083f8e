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
}
