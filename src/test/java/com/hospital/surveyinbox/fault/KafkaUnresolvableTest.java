package com.hospital.surveyinbox.fault;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A pod starting while the broker's name does not resolve (the brokers' DNS records gone with their pods, a DNS
 * outage, a name mistyped in one overlay): reception does not need Kafka, so the pod starts, is ready and stores what
 * it is sent; the events wait for the redelivery job. The Kafka clients refuse a bootstrap list with no resolvable
 * address in their constructors ("No resolvable bootstrap urls"), and the health indicator's and the publish
 * route's were made at start: the context failed, and the pods crash-looped for as long as the name did not resolve.
 */
@TestPropertySource(properties = "embedded.kafka.brokers=kafka.invalid:9092")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class KafkaUnresolvableTest extends IntegrationTest {

    @Test
    void aPodWhoseBrokerNameDoesNotResolveStartsReadyAndStoresWhatItIsSent() {
        assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(200);
        String subject = uniqueSubject("NODNS");
        Reply reply = client.receive(ServiceClient.message(subject, ""));
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        assertThat(reply.json().get("resultCode").asText()).isEqualTo("Y");
        assertThat(rows.status(reply.json().get("inboxId").asText())).isEqualTo("RECEIVED");
        assertThat(client.management("/actuator/health", ServiceClient.OPS_AUTH).json().at("/components/kafka/status").asText())
                .isEqualTo("DOWN");
    }
}
