package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Behind a trusted proxy (here the test client's loopback address plays the ingress, which appends the peer
 * it saw to X-Forwarded-For): a client that forges the legacy sender's address cannot lock the sender out,
 * a password guesser is slowed on its own real address while the sender keeps getting 200, and the
 * management port's Basic authentication is limited the same way.
 */
@TestPropertySource(properties = {
        "adapter.security.trusted-proxies=127.0.0.1/32,::1/128",
        "adapter.security.auth-failures.burst=3",
        "adapter.security.auth-failures.per-minute=1",
        "adapter.kafka.topic=forwarded-tests",
        "adapter.kafka.group-id=forwarded-tests",
        "spring.quartz.scheduler-name=forwarded-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ForwardedClientAddressTest extends IntegrationTest {

    static final String LEGACY_SENDER = "10.0.0.5";
    static final String ATTACKER = "192.0.2.9";

    @Test
    void aForgedForwardedAddressCannotLockOutTheLegacySender() {
        String prefix = uniqueSubject("FWD");
        // the attacker writes the sender's address; the proxy appends the attacker's real one
        int unauthorized = 0;
        int limited = 0;
        for (int i = 0; i < 12; i++) {
            int status = receive(prefix + "-x" + i, AuthFailureLimitTest.WRONG, LEGACY_SENDER + ", " + ATTACKER).status();
            assertThat(status).isIn(401, 429);
            unauthorized += status == 401 ? 1 : 0;
            limited += status == 429 ? 1 : 0;
        }
        assertThat(unauthorized).isEqualTo(3);
        assertThat(limited).isEqualTo(9);

        for (int i = 0; i < 5; i++) {
            assertThat(receive(prefix + "-" + i, ServiceClient.LEGACY_AUTH, LEGACY_SENDER).status()).isEqualTo(200);
        }
        // none of the attacker's failures were counted against the sender's address
        assertThat(receive(prefix + "-typo", AuthFailureLimitTest.WRONG, LEGACY_SENDER).status()).isEqualTo(401);
        // the guesser stays slowed; right credentials from its address would still pass
        assertThat(receive(prefix + "-y", AuthFailureLimitTest.WRONG, ATTACKER).status()).isEqualTo(429);
        assertThat(receive(prefix + "-z", ServiceClient.LEGACY_AUTH, ATTACKER).status()).isEqualTo(200);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?", Long.class, prefix + "-%"))
                .isEqualTo(6);
    }

    @Test
    void theManagementPortsBasicAuthenticationIsLimitedToo() {
        String guesser = "198.51.100.77";
        String wrongOps = ServiceClient.basic("ops", "not-the-password");
        for (int i = 0; i < 3; i++) {
            assertThat(health(wrongOps, guesser).status()).isEqualTo(401);
        }
        Reply limited = health(wrongOps, guesser);
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.header("Retry-After")).isNotNull();

        Reply operator = health(ServiceClient.OPS_AUTH, guesser);
        assertThat(operator.status()).isEqualTo(200);
        assertThat(operator.body()).contains("\"components\"");
    }

    @Test
    void httpsAtTheIngressIsHonouredFromTheProxyOnly() {
        Reply page = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/ops/console"))
                .header("Authorization", ServiceClient.OPS_AUTH).header("X-Forwarded-Proto", "https").GET().build());
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.header("Set-Cookie")).contains("XSRF-TOKEN=").contains("Secure");
        assertThat(page.header("Strict-Transport-Security")).isNotNull();
    }

    private Reply receive(String subject, String authorization, String forwardedFor) {
        return client.post("/legacy/survey-send-info", ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8),
                "application/json", authorization, Map.of("X-Forwarded-For", forwardedFor));
    }

    private Reply health(String authorization, String forwardedFor) {
        return client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + managementPort + "/actuator/health"))
                .header("Authorization", authorization).header("X-Forwarded-For", forwardedFor).GET().build());
    }
}
