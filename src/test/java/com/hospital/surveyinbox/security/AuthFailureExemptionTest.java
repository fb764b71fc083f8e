package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/** The legacy sender's address is exempt: failures from it (its own or an attacker's behind it) never lock it out. */
@TestPropertySource(properties = {
        "adapter.security.auth-failures.burst=3",
        "adapter.security.auth-failures.per-minute=1",
        "adapter.security.auth-failures.exempt-addresses=127.0.0.1,0:0:0:0:0:0:0:1",
        "adapter.kafka.topic=authexempt-tests",
        "adapter.kafka.group-id=authexempt-tests",
        "spring.quartz.scheduler-name=authexempt-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class AuthFailureExemptionTest extends IntegrationTest {

    @Test
    void failuresFromAnExemptAddressNeverLockTheSenderOut() {
        byte[] body = ServiceClient.message(uniqueSubject("EXEMPT"), "").getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 10; i++) {
            assertThat(client.post("/legacy/survey-send-info", body, "application/json", AuthFailureLimitTest.WRONG, Map.of())
                    .status()).isEqualTo(401);
        }
        assertThat(client.post("/legacy/survey-send-info", body, "application/json", ServiceClient.LEGACY_AUTH, Map.of())
                .status()).isEqualTo(200);
    }
}
