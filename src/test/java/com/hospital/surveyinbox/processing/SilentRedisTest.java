package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.FreezableTcpProxy;
import com.hospital.surveyinbox.support.IntegrationTest;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Redis reached through a proxy whose connections can go silent: no close, no reset, only silence (a failover or a
 * partition that drops packets), which the client would otherwise notice only when the kernel gives up.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=silent-redis-tests",
        "adapter.kafka.group-id=silent-redis-tests",
        "spring.quartz.scheduler-name=silent-redis-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class SilentRedisTest extends IntegrationTest {

    static final FreezableTcpProxy PROXY = FreezableTcpProxy.inFrontOfRedisForTheNextContext();

    @AfterAll
    static void removeProxy() {
        PROXY.removeFromContexts();
        PROXY.close();
    }

    @Autowired
    MeterRegistry meters;

    private double hits() {
        return counted("hit");
    }

    private double reconnects(String reason) {
        return count("adapter.consent.cache.reconnects", "reason", reason);
    }

    private double counted(String result) {
        return count("adapter.consent.cache", "result", result);
    }

    /** Messages of survey {@code srvyNo}, one at a time, each to its completion, until {@code seen} holds. */
    private void sendUntil(String srvyNo, Duration atMost, java.util.concurrent.Callable<Boolean> seen) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(100)).until(() -> {
            rows.awaitStatus(client.accept(ConsentCacheTest.send(uniqueSubject("S"), srvyNo)), "COMPLETED");
            return seen.call();
        });
    }

    private double count(String name, String tag, String value) {
        var counter = meters.find(name).tag(tag, value).counter();
        return counter == null ? 0 : counter.count();
    }

    @Autowired
    org.springframework.data.redis.core.StringRedisTemplate redis;

    /**
     * A write refused as READONLY (the Redis the connection reaches became a replica: after a failover behind a
     * Service or DNS name, Redis keeps the demoted master's clients connected) replaces the connection, so that it
     * reaches the new master; it was kept, every SETEX refused, and once the entries it had expired nothing was cached
     * any more. Here the one Redis is made a replica (of nothing), then master again: the cache writes once more.
     */
    @Test
    void aWriteRefusedAsReadOnlyReplacesTheConnection() {
        int connections = PROXY.accepted();
        double replaced = reconnects("readonly");
        try {
            redis.execute((org.springframework.data.redis.core.RedisCallback<Void>) c -> {
                c.serverCommands().replicaOf("127.0.0.1", 1); // no master there: a read-only replica, its data kept
                return null;
            });
            String srvyNo = uniqueSubject("READONLY");
            rows.awaitStatus(client.accept(ConsentCacheTest.send(uniqueSubject("RO"), srvyNo)), "COMPLETED");
            await().atMost(Duration.ofSeconds(10)).until(() -> PROXY.accepted() > connections);
            assertThat(reconnects("readonly")).as("replaced for the READONLY answer").isEqualTo(replaced + 1);
            assertThat(await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> redis.hasKey("survey-inbox-adapter:consents:" + srvyNo), java.util.Objects::nonNull)).isFalse();
        } finally {
            // the one Redis of the whole JVM: a master again before any other test runs, checked
            await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                redis.execute((org.springframework.data.redis.core.RedisCallback<Void>) c -> {
                    c.serverCommands().replicaOfNoOne();
                    return null;
                });
                return redis.execute((org.springframework.data.redis.core.RedisCallback<Boolean>) c ->
                        "master".equals(c.serverCommands().info("replication").getProperty("role")));
            });
        }
        String srvyNo = uniqueSubject("READONLY");
        sendUntil(srvyNo, Duration.ofSeconds(30), () -> redis.hasKey("survey-inbox-adapter:consents:" + srvyNo));
    }

    /**
     * A Redis that answers every command after its timeout is left out for adapter.cache.redis-pause after the first
     * failure: the messages that follow skip it (counted skipped) instead of each waiting three timeouts (the GET, the
     * second GET and the SETEX: 1.5 s, more than the lookup the cache saves). Once Redis answers in time again, a
     * trial command takes it back: a survey looked up then is cached and hit.
     */
    @Test
    void aSlowRedisIsLeftOutAfterItsFirstTimeoutAndTakenBackOnceItAnswers() {
        double errorsBefore = counted("error");
        double skippedBefore = counted("skipped");
        long started = System.nanoTime();
        PROXY.slow(700, 800); // above the 500 ms command timeout
        try {
            for (int i = 0; i < 4; i++) {
                rows.awaitStatus(client.accept(ConsentCacheTest.send(uniqueSubject("SR"), uniqueSubject("SLOWREDIS"))), "COMPLETED");
            }
        } finally {
            PROXY.fast();
        }
        // the first GET timed out, then one trial per pause (5 s) at most (a slow run has several): never three per
        // message (12 here)
        long pauses = Duration.ofNanos(System.nanoTime() - started).toSeconds() / 5;
        assertThat(counted("error") - errorsBefore).as("failed commands").isBetween(1.0, 2.0 + pauses).isLessThan(12.0);
        assertThat(counted("skipped") - skippedBefore).as("commands left out").isGreaterThanOrEqualTo(6);

        String srvyNo = uniqueSubject("SLOWREDIS");
        double hitsBefore = hits();
        sendUntil(srvyNo, Duration.ofSeconds(30), () -> hits() > hitsBefore);
    }

    /**
     * A connection gone silent is replaced after a few timed-out commands: the cache answers again (the new
     * connection reaches Redis) instead of every command waiting its timeout for about 15 minutes.
     */
    @Test
    void aRedisConnectionGoneSilentIsReplaced() {
        String srvyNo = uniqueSubject("SILENT");
        rows.awaitStatus(client.accept(ConsentCacheTest.send(uniqueSubject("S0"), srvyNo)), "COMPLETED");
        rows.awaitStatus(client.accept(ConsentCacheTest.send(uniqueSubject("S1"), srvyNo)), "COMPLETED");
        double hitsBefore = hits();
        int connections = PROXY.accepted();
        double replaced = reconnects("silent");

        PROXY.blackholeOpenConnections();

        // the survey's messages keep coming; each completes (a timed-out command is a miss), and the hits come back
        sendUntil(srvyNo, Duration.ofSeconds(40), () -> hits() > hitsBefore);
        assertThat(PROXY.accepted()).as("a new connection").isGreaterThan(connections);
        assertThat(reconnects("silent")).as("counted").isGreaterThan(replaced);
    }
}
