package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/** The per-sender token bucket: 503 "please retry" beyond it, and nothing stored for a refused request. */
@TestPropertySource(properties = {
        "adapter.reception.rate-limit.per-second=1",
        "adapter.reception.rate-limit.burst=5",
        "adapter.kafka.topic=ratelimit-tests",
        "adapter.kafka.group-id=ratelimit-tests",
        "spring.quartz.scheduler-name=ratelimit-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RateLimitTest extends IntegrationTest {

    @org.springframework.beans.factory.annotation.Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @Test
    void answers503PleaseRetryBeyondTheSendersBurstAndStoresNothingForIt() {
        String prefix = uniqueSubject("RL");
        // the reception's 503s, which the unavailable alert and the SLO read
        double timed503 = meters.get("adapter.reception.accept").tag("status", "503").timer().count();
        int accepted = 0;
        int limited = 0;
        long started = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            Reply reply = client.receive(ServiceClient.message(prefix + "-" + i, ""));
            if (reply.status() == 200) {
                accepted++;
            } else {
                // the contract's "nothing stored, retry": the one status the legacy sender retries
                assertThat(reply.status()).isEqualTo(503);
                assertThat(reply.header("X-Result-Code")).isEqualTo("N");
                assertThat(reply.json().get("resultMessage").asText()).contains("please retry");
                assertThat(reply.header("Retry-After")).isEqualTo("1");
                limited++;
            }
        }
        // the burst, and one more per second the 20 requests took (a loaded machine takes longer: the bound follows it)
        long tookSeconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        assertThat(accepted).isBetween(5, 5 + (int) tookSeconds + 1);
        assertThat(limited).as("the limit applied at all").isPositive();
        assertThat(limited).isEqualTo(20 - accepted);
        assertThat((double) meters.get("adapter.reception.accept").tag("status", "503").timer().count()).isEqualTo(timed503 + limited);
        assertThat(meters.get("adapter.reception.rate-limited").counter().count()).isEqualTo(limited);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?", Long.class, prefix + "-%"))
                .isEqualTo(accepted);
        // the operator API is not limited by the legacy sender's use (a guard: the limiter is mapped to the reception)
        assertThat(client.opsPost("/ops/inbox/999999999/requeue").status()).isEqualTo(404);
    }
}
