package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

/**
 * When the watch restarts the consumer route (each restart is a rebalance for every pod): once two looks in a row
 * found ended threads, then backing off while they keep ending, at most five minutes apart; a later incident starts
 * over. The watch against a real broker's refusal: KafkaRestartTest.
 */
class KafkaConsumerWatchTest {

    private final AtomicLong now = new AtomicLong();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final KafkaConsumerWatch watch = new KafkaConsumerWatch(new DefaultCamelContext(), Duration.ofSeconds(10), 16,
            meters, now::get);

    /** The seconds at which a watch looking every 10 s restarts while {@code ended} threads stay ended. */
    private List<Long> restartsOver(long from, long seconds, int ended) {
        List<Long> at = new ArrayList<>();
        for (long s = from; s < from + seconds; s += 10) {
            now.set(Duration.ofSeconds(s).toNanos());
            if (watch.restartDue(ended)) {
                watch.restarted("inbox-process");
                at.add(s);
            }
        }
        return at;
    }

    @Test
    void restartsOnceTwoLooksFoundThreadsEndedThenBackOffAndALaterIncidentStartsOver() {
        assertThat(restartsOver(0, 100, 0)).as("nothing ended: nothing to restart").isEmpty();
        assertThat(restartsOver(1000, 1200, 2)).containsExactly(1010L, 1030L, 1050L, 1090L, 1170L, 1330L, 1630L, 1930L);
        assertThat(meters.counter("adapter.kafka.consumer.restarts").count()).isEqualTo(8);
        // fixed after the restart at 1930 s; ten minutes later threads end again: restarted after two looks, backing
        // off from one period
        assertThat(restartsOver(1940, 590, 0)).isEmpty();
        assertThat(restartsOver(2530, 60, 2)).containsExactly(2540L, 2560L, 2580L);
    }

    @Test
    void oneLookThatFoundThreadsEndedIsNoRestart() {
        now.set(0);
        assertThat(watch.restartDue(3)).isFalse();
        now.set(Duration.ofSeconds(10).toNanos());
        assertThat(watch.restartDue(0)).isFalse();
        now.set(Duration.ofSeconds(20).toNanos());
        assertThat(watch.restartDue(3)).as("the first of two looks again").isFalse();
    }

    @Test
    void theGaugeAndTheCounterAreThereAtZeroFromTheStart() {
        assertThat(meters.get("adapter.kafka.consumer.threads.ended").gauge().value()).isZero();
        assertThat(meters.get("adapter.kafka.consumer.restarts").counter().count()).isZero();
    }
}
