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
                new com.fasterxml.jackson.databind.ObjectMapper(), null, Duration.ofSeconds(1), System::nanoTime);
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

    /** A cache on a test's ticker: the pause after a failed command 5 s (adapter.cache.redis-pause), a trial 1 s. */
    static ConsentCache cache(java.util.concurrent.atomic.AtomicLong ticker) {
        return new ConsentCache(TestProperties.bind(Map.of("adapter.cache.redis-pause", "PT5S")), new SimpleMeterRegistry(),
                new com.fasterxml.jackson.databind.ObjectMapper(), null, Duration.ofSeconds(1), ticker::get);
    }

    /**
     * After a failed command Redis is left out for the pause (each command a miss: a down or slow Redis cost three
     * timeouts per message, more than the lookup saved); then one command tries it while the others still skip it;
     * when that trial's longest run passes without a failure, everyone uses Redis again; a failed trial pauses again.
     */
    @Test
    void aFailedCommandLeavesRedisOutForThePauseThenOneCommandTriesIt() {
        java.util.concurrent.atomic.AtomicLong ticker = new java.util.concurrent.atomic.AtomicLong(100_000_000_000L);
        long s = 1_000_000_000L;
        ConsentCache cache = cache(ticker);
        assertThat(cache.usable()).isTrue();
        assertThat(cache.usable()).isTrue();

        assertThat(cache.pause(false, false)).isFalse();
        assertThat(cache.usable()).as("paused").isFalse();
        ticker.addAndGet(4 * s);
        assertThat(cache.usable()).as("still paused").isFalse();
        ticker.addAndGet(s);
        assertThat(cache.usable()).as("the trial").isTrue();
        assertThat(cache.usable()).as("the others, while it runs").isFalse();
        cache.pause(false, false); // the trial failed
        ticker.addAndGet(s + 1);
        assertThat(cache.usable()).as("paused again from the trial's failure").isFalse();
        ticker.addAndGet(4 * s);
        assertThat(cache.usable()).as("the next trial").isTrue();
        ticker.addAndGet(s / 2);
        assertThat(cache.usable()).isFalse();
        ticker.addAndGet(s / 2);
        assertThat(cache.usable()).as("the trial's run passed without a failure: Redis answers").isTrue();
        assertThat(cache.usable()).isTrue();

        cache.redisAnswered(); // not a trial: nothing changes
        assertThat(cache.usable()).isTrue();
        cache.pause(false, false);
        ticker.addAndGet(5 * s);
        assertThat(cache.usable()).as("a trial").isTrue();
        cache.redisAnswered();
        assertThat(cache.usable()).as("the trial answered: taken back at once").isTrue();
        assertThat(cache.usable()).isTrue();
    }

    /**
     * Only the trial's own thread ends it: after a failed command the route's error handler runs (continued) and the
     * step that reports an answer still runs; a thread stalled past the pause would otherwise end a later trial,
     * taken by another exchange, on the strength of its failure.
     */
    @Test
    void aFailedTrialsLateAnswerStepDoesNotEndTheNextTrial() throws Exception {
        java.util.concurrent.atomic.AtomicLong ticker = new java.util.concurrent.atomic.AtomicLong(100_000_000_000L);
        long s = 1_000_000_000L;
        ConsentCache cache = cache(ticker);
        cache.pause(false, false);
        ticker.addAndGet(5 * s);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            assertThat(cache.usable()).as("this thread's trial").isTrue();
            cache.pause(false, false); // it failed (the error handler)
            ticker.addAndGet(5 * s);
            assertThat(other.submit(cache::usable).get(5, TimeUnit.SECONDS)).as("another exchange's trial").isTrue();
            cache.redisAnswered(); // the failed trial's step, late
            assertThat(cache.usable()).as("the other trial still runs").isFalse();
            other.submit(cache::redisAnswered).get(5, TimeUnit.SECONDS);
            assertThat(cache.usable()).as("its own answer ends it").isTrue();
        } finally {
            other.shutdownNow();
        }
    }

    /** A pause shorter than a command's longest run: commands left on a replaced socket still do not count. */
    @Test
    void aShortPauseStillKeepsTheReplacedSocketsTimeoutsOffTheNewConnection() {
        java.util.concurrent.atomic.AtomicLong ticker = new java.util.concurrent.atomic.AtomicLong(100_000_000_000L);
        ConsentCache cache = new ConsentCache(TestProperties.bind(Map.of("adapter.cache.redis-pause", "PT0.1S")), new SimpleMeterRegistry(),
                new com.fasterxml.jackson.databind.ObjectMapper(), null, Duration.ofSeconds(1), ticker::get);
        cache.pause(true, false);
        assertThat(cache.pause(true, false)).as("replaced").isTrue();
        ticker.addAndGet(500_000_000L); // past the pause, within a command's longest run
        assertThat(cache.pause(true, false)).isFalse();
        assertThat(cache.pause(true, false)).as("still the old socket's").isFalse();
    }

    /**
     * Timed-out commands in a row (the one that paused the cache and the trial after it, or two under way together)
     * replace the connection; those within a pause of a replacement (left on the silent socket) do not count against
     * the new one, and a failure that is not a timeout, or Redis answering in between, starts the count again.
     */
    @Test
    void twoTimeoutsInARowReplaceTheConnectionOncePerPause() {
        java.util.concurrent.atomic.AtomicLong ticker = new java.util.concurrent.atomic.AtomicLong(100_000_000_000L);
        long s = 1_000_000_000L;
        ConsentCache cache = cache(ticker);
        assertThat(cache.pause(true, false)).as("one timeout").isFalse();
        assertThat(cache.pause(true, false)).as("a second under way together").isTrue();
        assertThat(cache.pause(true, false)).as("left on the replaced socket").isFalse();
        ticker.addAndGet(5 * s);
        assertThat(cache.usable()).as("the trial, on the new connection").isTrue();
        assertThat(cache.pause(true, false)).as("the new connection's first timeout").isFalse();
        ticker.addAndGet(5 * s);
        assertThat(cache.usable()).isTrue();
        assertThat(cache.pause(true, false)).as("its trial timed out too").isTrue();

        ticker.addAndGet(5 * s);
        assertThat(cache.usable()).isTrue();
        ticker.addAndGet(2 * s);
        assertThat(cache.usable()).as("Redis answers again").isTrue();
        ticker.addAndGet(60 * s);
        assertThat(cache.pause(true, false)).as("a lone timeout later").isFalse();
        ticker.addAndGet(5 * s);
        assertThat(cache.usable()).isTrue();
        ticker.addAndGet(2 * s);
        assertThat(cache.usable()).as("answered").isTrue();
        assertThat(cache.pause(true, false)).as("counting started again").isFalse();
        ticker.addAndGet(60 * s);
        assertThat(cache.pause(false, true)).as("a write refused as READONLY: at once").isTrue();
        assertThat(cache.pause(false, true)).as("within the pause of that replacement").isFalse();
    }
}
