package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.MonotonicClock;
import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

/**
 * A redelivery tick's budgets are timed on the monotonic clock (no {@code Clock} bean: production): a step of the
 * pod's wall clock neither closes a tick's publishing at once (a step forward) nor lets its owed replies run for
 * the length of a step back, holding the stateful job (no stuck-row reset, no lost-event republish meanwhile).
 */
class PublishBudgetClockTest {

    @Test
    void withoutAClockBeanTheBudgetsAreTimedOnTheMonotonicClock() {
        RedeliverySweep sweep = new RedeliverySweep(TestProperties.bind(Map.of()), new SimpleMeterRegistry(), null,
                new DefaultListableBeanFactory().getBeanProvider(java.time.Clock.class));
        assertThat(sweep.clock()).isInstanceOf(MonotonicClock.class);
    }

    @Test
    void aBudgetEndsWithTheMonotonicTimeNotTheWallClock() {
        AtomicLong nanos = new AtomicLong(7_000_000_000L);
        // the wall clock read when the tick began; whatever the wall clock does later, only the ticker counts
        MonotonicClock clock = new MonotonicClock(Instant.parse("2026-03-29T00:59:59Z"), nanos::get);
        PublishBudget budget = new PublishBudget(clock, java.time.Duration.ofSeconds(30));
        nanos.addAndGet(29_000_000_000L);
        assertThat(budget.open()).isTrue();
        nanos.addAndGet(1_000_000_000L);
        assertThat(budget.open()).isFalse();
        assertThat(budget.skipped()).isOne();
    }
}
