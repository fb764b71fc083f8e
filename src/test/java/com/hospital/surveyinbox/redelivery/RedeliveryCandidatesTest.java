package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.StaticListableBeanFactory;

/**
 * A tick's candidates carry the kind they are counted as once Kafka takes their event: a reset row's released
 * successor that is also due as a lost event (or a retry) counts as one, not as nothing; the successor alone, which
 * no kind describes, is not counted.
 */
class RedeliveryCandidatesTest {

    @Test
    void aReleasedSuccessorThatIsDueAnywayCountsAsWhatItIsDueAs() {
        RedeliverySweep sweep = new RedeliverySweep(TestProperties.bind(Map.of()), new SimpleMeterRegistry(), null,
                new StaticListableBeanFactory().getBeanProvider(java.time.Clock.class));
        List<Map<String, Object>> stuck = List.of(Map.of("inboxId", 1L, "status", "RECEIVED"),
                Map.of("inboxId", 2L, "status", "SUCCESSOR"), Map.of("inboxId", 3L, "status", "SUCCESSOR"));
        List<Map<String, Object>> lost = List.of(Map.of("inboxId", 2L), Map.of("inboxId", 4L));
        List<Map<String, Object>> retries = List.of(Map.of("inboxId", 3L), Map.of("inboxId", 1L));

        List<Map<String, Object>> events = sweep.candidates(stuck, lost, retries);

        assertThat(events).extracting(e -> e.get("inboxId")).containsExactly(1L, 2L, 3L, 4L);
        assertThat(events).extracting(e -> e.get(RedeliverySweep.KIND)).containsExactly("stuck", "lost-event", "retry", "lost-event");
    }
}
