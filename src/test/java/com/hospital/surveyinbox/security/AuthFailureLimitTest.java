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

/**
 * Wrong credentials are limited per client address — 401 up to the burst, then 429 — while right ones are
 * never refused. No trusted proxy is configured here (the default), so X-Forwarded-For is ignored: a forged
 * header neither changes whose failures are counted nor gets a guesser a fresh limit.
 */
@TestPropertySource(properties = {
        "adapter.security.auth-failures.burst=3",
        "adapter.security.auth-failures.per-minute=1",
        "adapter.security.legacy.next-password=legacy-new-secret",
        "adapter.security.ops.next-password=ops-new-secret",
        "adapter.kafka.topic=authlimit-tests",
        "adapter.kafka.group-id=authlimit-tests",
        "spring.quartz.scheduler-name=authlimit-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class AuthFailureLimitTest extends IntegrationTest {

    static final String WRONG = ServiceClient.basic("legacy", "a-wrong-guess");

    @Test
    void aGuesserIsSlowedWhileRightCredentialsFromTheSameAddressAreNeverRefused() {
        String subject = uniqueSubject("GUESS");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 3; i++) {
            assertThat(post(body, WRONG, Map.of("X-Forwarded-For", "10.0.0." + i)).status()).isEqualTo(401);
        }

        Reply limited = post(body, WRONG, Map.of("X-Forwarded-For", "10.0.0.99"));
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.header("X-Result-Code")).isEqualTo("N");
        assertThat(Long.parseLong(limited.header("Retry-After"))).isPositive();
        assertThat(post(body, ServiceClient.basic("nobody", "x"), Map.of()).status()).isEqualTo(429);

        // the sender behind the same address, with its right password, keeps being answered
        Reply accepted = post(body, ServiceClient.LEGACY_AUTH, Map.of());
        assertThat(accepted.status()).isEqualTo(200);
        assertThat(client.ops("/ops/inbox/stats").status()).isEqualTo(200);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isOne();
        // and a guess is still refused after that success
        assertThat(post(body, WRONG, Map.of()).status()).isEqualTo(429);
        // no credentials at all is no guess: the browser's first request still gets the challenge
        assertThat(client.get("/ops/console", null).status()).isEqualTo(401);
    }

    @org.springframework.beans.factory.annotation.Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    /**
     * A password being rotated: the next one (adapter.security.*.next-password) is accepted beside the current one on
     * every pod, so a client is never refused mid-rollout whichever it sends (an older image, which knows no next
     * password, accepts the current one the client still sends), and each request that passes is counted by the
     * password it used, per credential (the operator's sign that the client has moved). With one password per
     * credential, pods rolled one by one refused either password on half of them: a 401, which the legacy sender
     * does not retry.
     */
    @Test
    void aPasswordBeingRotatedIsAcceptedInItsCurrentAndNextFormAndEachUseCounted() {
        String subject = uniqueSubject("ROTATE");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);
        double current = used("legacy", "current");
        double next = used("legacy", "next");

        assertThat(post(body, ServiceClient.LEGACY_AUTH, Map.of()).status()).isEqualTo(200);
        assertThat(used("legacy", "current")).isEqualTo(current + 1);
        assertThat(post(body, ServiceClient.basic("legacy", "legacy-new-secret"), Map.of()).status()).isEqualTo(200);
        assertThat(used("legacy", "next")).isEqualTo(next + 1);
        assertThat(used("legacy", "current")).as("the next password is not the current one").isEqualTo(current + 1);
        double opsNext = used("ops", "next");
        assertThat(client.get("/ops/inbox/stats", ServiceClient.basic("ops", "ops-new-secret")).status()).isEqualTo(200);
        assertThat(used("ops", "next")).isEqualTo(opsNext + 1);
    }

    private double used(String credential, String password) {
        io.micrometer.core.instrument.Counter counter = meters.find("adapter.security.password.used")
                .tag("credential", credential).tag("password", password).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aForwardedProtoFromAnUntrustedPeerMeansNothing() {
        Reply page = client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://localhost:" + port + "/ops/console"))
                .header("Authorization", ServiceClient.OPS_AUTH).header("X-Forwarded-Proto", "https").GET().build());
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.header("Set-Cookie")).contains("XSRF-TOKEN=").doesNotContain("Secure");
        assertThat(page.header("Strict-Transport-Security")).isNull();
    }

    private Reply post(byte[] body, String authorization, Map<String, String> headers) {
        return client.post("/legacy/survey-send-info", body, "application/json", authorization, headers);
    }
}
