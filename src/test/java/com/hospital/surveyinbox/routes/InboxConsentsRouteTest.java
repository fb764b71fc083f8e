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
}
