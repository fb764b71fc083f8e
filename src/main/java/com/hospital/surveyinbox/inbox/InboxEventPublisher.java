package com.hospital.surveyinbox.inbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.component.kafka.KafkaConstants;
import org.springframework.context.annotation.Lazy;
import org.springframework.stereotype.Component;

/**
 * Turns an inbox row into its Kafka event and publishes it through {@code routes/inbox-publish.camel.yaml}.
 * {@link #prepare} is that route's step {@code inbox-publish-prepare}: it drops every inbound header
 * first, so nothing from the HTTP request (Authorization!) can leak into Kafka record headers.
 */
@Component("inboxEvents")
public class InboxEventPublisher {

    public static final String ENDPOINT = "direct:inbox-publish";
    public static final String PUBLISHED = "inboxPublished";

    private final ObjectMapper objectMapper;
    private final ProducerTemplate producer;

    public InboxEventPublisher(ObjectMapper objectMapper, @Lazy ProducerTemplate producer) {
        this.objectMapper = objectMapper;
        this.producer = producer;
    }

    /** Body {@link Acceptance} or {@link InboxEvent} -> JSON event, key = srvyDrawupNo, no other header. */
    public void prepare(Exchange exchange) throws JsonProcessingException {
        Object body = exchange.getMessage().getBody();
        InboxEvent event = body instanceof Acceptance acceptance ? acceptance.event() : (InboxEvent) body;
        exchange.getMessage().getHeaders().clear();
        exchange.setProperty("inboxId", event.inboxId());
        exchange.getMessage().setHeader(KafkaConstants.KEY, event.srvyDrawupNo());
        exchange.getMessage().setBody(objectMapper.writeValueAsString(event));
    }

    /** Publishes synchronously; false when the broker did not take it (the row stays for the redelivery job). */
    public boolean publish(InboxEvent event) {
        Exchange result = producer.send(ENDPOINT, exchange -> exchange.getMessage().setBody(event));
        return result.getException() == null && result.getProperty(PUBLISHED, false, Boolean.class);
    }
}
