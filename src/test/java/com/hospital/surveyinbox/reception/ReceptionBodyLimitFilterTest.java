package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.support.TestProperties;
import jakarta.servlet.ServletRequest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The body the filter read is the route's while it runs and nobody's once the request is answered: the event
 * publish's wireTap copy keeps the request as its message's, and while Kafka was away each of the publish pool's
 * queued copies held a whole body (5,000 of them: hundreds of MiB of a 768 MiB heap).
 */
class ReceptionBodyLimitFilterTest {

    @Test
    void theBodyIsTheRoutesWhileItRunsAndReleasedOnceAnswered() throws Exception {
        ReceptionBodyLimitFilter filter = new ReceptionBodyLimitFilter(TestProperties.bind(Map.of()),
                new ReceptionReplyWriter(new ObjectMapper()));
        byte[] body = ("{\"pad\":\"" + "x".repeat(60_000) + "\"}").getBytes(StandardCharsets.UTF_8);
        MockHttpServletRequest request = new MockHttpServletRequest("POST", ReceptionBodyLimitFilter.RECEPTION_PATH);
        request.setContentType("application/json");
        request.setContent(body);
        AtomicReference<ServletRequest> held = new AtomicReference<>();
        AtomicReference<byte[]> readByTheRoute = new AtomicReference<>();

        filter.doFilter(request, new MockHttpServletResponse(), (req, res) -> {
            held.set(req); // what a wireTap copy of the exchange keeps
            readByTheRoute.set(req.getInputStream().readAllBytes());
        });

        assertThat(readByTheRoute.get()).isEqualTo(body);
        assertThat(held.get().getInputStream().readAllBytes()).isEmpty();
        assertThat(held.get().getContentLength()).isZero();
        assertThat(request.getAttribute(ReceptionBodyLimitFilter.RAW_BODY)).isNull();
    }
}
