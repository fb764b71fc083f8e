package com.hospital.surveyinbox.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.processing.Registration;
import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;

/**
 * The consent lookup's turn per srvyNo ({@code routes/inbox-consents.camel.yaml}): a refusal goes to the consumers
 * that were waiting while it was answered, never to one that came after it; the turn travels with the exchange, so
 * it is released from whichever thread ends the lookup, once.
 */
class ConsentCacheTurnTest {

    /** A cache whose waiters wait up to 10 s (twice the response timeout). */
    static ConsentCache cache() {
        return new ConsentCache(TestProperties.bind(Map.of("adapter.http.response-timeout", "PT5S")), new SimpleMeterRegistry(),
                new com.fasterxml.jackson.databind.ObjectMapper(), null);
    }

    static Registration msg(String srvyNo) {
        return new Registration(1, "S1", "SEND", "P1", srvyNo, "F100", null, null, null, true, null, null);
    }

    @Test
    void waitersShareARefusalALaterConsumerAsksAndATurnIsReleasedOnceFromAnyThread() throws Exception {
        ConsentCache cache = cache();
        ExecutorService consumers = Executors.newFixedThreadPool(3);
        try {
            ConsentCache.Turn holder = cache.awaitTurn(msg("NOCFG-1"));
            assertThat(holder.refusal()).isNull();
            Future<ConsentCache.Turn> waiter = consumers.submit(() -> cache.awaitTurn(msg("NOCFG-1")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.waiting("NOCFG-1") == 1);

            cache.refused(holder, new HttpOperationFailedException("http://legacy/surveys/NOCFG-1/consents", 404, "Not Found",
                    null, Map.of(), "{\"code\":\"SURVEY_NOT_CONFIGURED\",\"message\":\"survey not configured\"}"), "legacy", "consents");
            // answered: a consumer arriving now, before the holder's release, asks again
            Future<ConsentCache.Turn> later = consumers.submit(() -> cache.awaitTurn(msg("NOCFG-1")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.waiting("NOCFG-1") == 2);

            consumers.submit(() -> cache.release(holder)).get(10, TimeUnit.SECONDS); // another thread ends the turn
            cache.release(holder); // and a second release does nothing

            ConsentCache.Turn shared = waiter.get(10, TimeUnit.SECONDS);
            assertThat(shared.refusal()).isNotNull();
            assertThat(shared.refusal().answer().getStatusCode()).isEqualTo(404);
            ConsentCache.Turn asks = later.get(10, TimeUnit.SECONDS);
            assertThat(asks.refusal()).isNull();
            assertThat(cache.freeTurns("NOCFG-1")).as("the later consumer holds the only turn").isZero();

            cache.release(asks);
            cache.release(shared); // a shared refusal holds nothing
            assertThat(cache.freeTurns("NOCFG-1")).as("nothing held, nothing remembered").isEqualTo(-1);
        } finally {
            consumers.shutdownNow();
        }
    }

    @Test
    void waitersShareAnAnswerAndAConsumerAfterItAsksAgain() throws Exception {
        ConsentCache cache = cache();
        ExecutorService consumers = Executors.newFixedThreadPool(2);
        try {
            ConsentCache.Turn holder = cache.awaitTurn(msg("CFG-1"));
            Future<ConsentCache.Turn> waiter = consumers.submit(() -> cache.awaitTurn(msg("CFG-1")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.waiting("CFG-1") == 1);

            cache.answered(holder, "[{\"consentCd\":\"C1\"}]");
            cache.release(holder);

            ConsentCache.Turn shared = waiter.get(10, TimeUnit.SECONDS);
            assertThat(shared.answer()).isEqualTo("[{\"consentCd\":\"C1\"}]");
            assertThat(shared.refusal()).isNull();
            assertThat(cache.freeTurns("CFG-1")).as("a shared answer holds nothing").isEqualTo(-1);
            ConsentCache.Turn later = cache.awaitTurn(msg("CFG-1"));
            assertThat(later.answer()).as("not a cache: a consumer after the lookup reads Redis or asks").isNull();
            cache.release(later);
        } finally {
            consumers.shutdownNow();
        }
    }

    /**
     * Three timed-out commands within 10 s replace the connection; those within 5 s of a replacement (left on the
     * silent socket) do not count against the new one.
     */
    @Test
    void aConnectionIsReplacedAfterThreeTimeoutsInTheWindowAtMostEveryFiveSeconds() {
        ConsentCache cache = cache();
        long s = 1_000_000_000L;
        long t = 100 * s;
        assertThat(cache.silent(t)).isFalse();
        assertThat(cache.silent(t + s)).isFalse();
        assertThat(cache.silent(t + 2 * s)).as("the third within the window").isTrue();
        assertThat(cache.silent(t + 3 * s)).isFalse();
        assertThat(cache.silent(t + 3 * s)).isFalse();
        assertThat(cache.silent(t + 4 * s)).as("commands left on the silent socket, not counted").isFalse();
        assertThat(cache.silent(t + 8 * s)).as("one timeout on the new connection").isFalse();
        assertThat(cache.silent(t + 9 * s)).isFalse();
        assertThat(cache.silent(t + 10 * s)).as("three on the new connection").isTrue();
        assertThat(cache.silent(t + 30 * s)).as("outside the window: counting starts again").isFalse();
        assertThat(cache.silent(t + 31 * s)).isFalse();
        assertThat(cache.silent(t + 32 * s)).isTrue();
        assertThat(cache.silent(t + 40 * s)).as("a lone timeout later").isFalse();
    }
}
