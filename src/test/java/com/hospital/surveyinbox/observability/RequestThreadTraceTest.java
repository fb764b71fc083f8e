package com.hospital.surveyinbox.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import jakarta.servlet.Filter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A request thread carries no trace of an earlier request into the next: Camel puts its route's {@code trace_id} and
 * {@code span_id} into the MDC and, when the route goes on on another thread (the Kafka producer's, after an
 * operator's requeue), leaves them on the request thread. Every later line of that thread (a reception's
 * "Inbox unavailable", untraced by design) was written under the operator's trace. One request thread here, so the
 * second request runs where the first did; its own context, closed after.
 */
@TestPropertySource(properties = {"server.tomcat.threads.max=1", "server.tomcat.threads.min-spare=1"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RequestThreadTraceTest extends IntegrationTest {

    /** The trace a request found on its thread as it came in (after the service's own filters). */
    static final List<String> FOUND = new CopyOnWriteArrayList<>();

    @TestConfiguration
    static class Recorder {
        @Bean
        FilterRegistrationBean<Filter> traceOnArrival() {
            FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>((request, response, chain) -> {
                FOUND.add(MDC.get("trace_id") + "/" + MDC.get("span_id"));
                chain.doFilter(request, response);
            });
            registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
            return registration;
        }
    }

    @Test
    void aRequestThreadCarriesNoTraceOfTheRequestBefore() {
        String subject = uniqueSubject("MDCLEAK");
        DownstreamSimulator.Fault down = simulator().failWhen("POST /survey/dispatch-bundles", 500, "{}");
        String id;
        try {
            id = client.accept(ServiceClient.message(subject, ""));
            rows.awaitAttempt(id, 1, "FAILED");
        } finally {
            simulator().remove(down);
        }
        assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
        rows.awaitStatus(id, "COMPLETED");
        FOUND.clear();
        assertThat(client.ops("/ops/inbox/stats").status()).isEqualTo(200);
        assertThat(FOUND).containsExactly("null/null");
    }
}
