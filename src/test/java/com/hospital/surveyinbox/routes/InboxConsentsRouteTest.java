package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.support.ServiceClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-consents.camel.yaml}, through the registration that uses it (shared setup: {@link RouteKit}). */
class InboxConsentsRouteTest extends RouteKit {

    @Test
    void consentsAreLookedUpOncePerSurveyEvenByConcurrentMissesAndThenComeFromRedis() throws Exception {
        String srvyNo = "CONSENT-" + uniqueSubject("ALONE");
        mock("mock:consent-lookup").expectedMessageCount(1);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<Outcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String subject = uniqueSubject("ALONE-CNS");
            outcomes.add(pool.submit(() -> register(subject,
                    ServiceClient.message(subject, "P-" + subject, "\"srvyNo\":\"" + srvyNo + "\""), Map.of())));
        }
        for (Future<Outcome> f : outcomes) {
            assertThat(f.get(30, TimeUnit.SECONDS).success()).isTrue();
        }
        pool.shutdown();

        mock("mock:consent-lookup").assertIsSatisfied();
        assertThat(redis.opsForValue().get("survey-inbox-adapter:consents:" + srvyNo)).contains("C1");
        JsonNode bundle = mapper.readTree(mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(bundle.get("consents")).hasSize(1);
    }

    /**
     * A Redis failure whose innermost cause is a plain JDK exception: Spring's RedisSystemException around the
     * IOException of a connection reset under a command (Spring Data Redis wraps what Lettuce's own exceptions do not
     * cover that way). Camel takes the policy closest by class level: the IOException is one level from the lookup's
     * java.lang.Exception policy, Spring's exception three from DataAccessException, so the registration failed as a
     * system error (charged, towards DEAD) instead of going on as a miss (CONTRACT §4: a Redis failure falls back to
     * the call).
     */
    @Test
    void aRedisFailureAroundAPlainJdkExceptionIsStillAMiss() throws Exception {
        String srvyNo = "CONSENT-" + uniqueSubject("JDKCAUSE");
        org.apache.camel.builder.AdviceWith.adviceWith(camel, "inbox-consents", a -> a.weaveById("to-redis-consents-get").before()
                .process(e -> {
                    if (String.valueOf(e.getMessage().getHeader("CamelRedis.Key")).endsWith(srvyNo)) {
                        throw new org.springframework.data.redis.RedisSystemException("Connection reset by peer",
                                new java.io.IOException("Connection reset by peer"));
                    }
                }));
        double errors = meters.counter("adapter.consent.cache", "result", "error").count();
        String subject = uniqueSubject("ALONE-JDK");

        Outcome outcome = register(subject, ServiceClient.message(subject, "P-" + subject, "\"srvyNo\":\"" + srvyNo + "\""), Map.of());

        assertThat(outcome.success()).as(String.valueOf(outcome)).isTrue();
        assertThat(meters.counter("adapter.consent.cache", "result", "error").count()).isEqualTo(errors + 1);
        // a worker interrupted in a command (shutdown) is no Redis outage: Redis is not left out for the pod's workers
        com.hospital.surveyinbox.cache.ConsentCache cache = camel.getRegistry()
                .lookupByNameAndType("consentCache", com.hospital.surveyinbox.cache.ConsentCache.class);
        assertThat(cache.isRedisFailure(new org.springframework.data.redis.RedisSystemException("Redis command interrupted",
                new io.lettuce.core.RedisCommandInterruptedException(new InterruptedException())))).isFalse();

        // Redis is left out for its pause after a failure: the other test here expects it in use again
        String back = "CONSENT-" + uniqueSubject("BACK");
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).pollInterval(java.time.Duration.ofMillis(500)).until(() -> {
            String next = uniqueSubject("ALONE-BACK");
            register(next, ServiceClient.message(next, "P-" + next, "\"srvyNo\":\"" + back + "\""), Map.of());
            return redis.hasKey("survey-inbox-adapter:consents:" + back);
        });
    }
}
