package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/** Failed Basic authentications are limited per client address, without becoming a password oracle. */
@TestPropertySource(properties = {
        "adapter.security.auth-failures.burst=3",
        "adapter.security.auth-failures.per-minute=1",
        "adapter.kafka.topic=authlimit-tests",
        "adapter.kafka.group-id=authlimit-tests",
        "spring.quartz.scheduler-name=authlimit-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class AuthFailureLimitTest extends IntegrationTest {

    static final String WRONG = ServiceClient.basic("legacy", "a-wrong-guess");

    @Test
    void anAddressThatKeepsFailingGets429AndLearnsNothingMoreFromItsGuesses() {
        String subject = uniqueSubject("GUESS");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 3; i++) {
            assertThat(client.post("/legacy/survey-send-info", body, "application/json", WRONG, Map.of()).status()).isEqualTo(401);
        }

        Reply limited = client.post("/legacy/survey-send-info", body, "application/json", WRONG, Map.of());
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.header("X-Result-Code")).isEqualTo("N");
        assertThat(Long.parseLong(limited.header("Retry-After"))).isPositive();
        // the right password from the same address is not checked either: a 200 here would be an oracle
        assertThat(client.post("/legacy/survey-send-info", body, "application/json", ServiceClient.LEGACY_AUTH, Map.of())
                .status()).isEqualTo(429);
        assertThat(client.ops("/ops/inbox/stats").status()).isEqualTo(429);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
    }
}
