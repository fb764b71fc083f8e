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

    /**
     * Body {@link Acceptance}, {@link InboxEvent} or a row read by camel-sql (a map with inboxId,
     * srvyDrawupNo, msgType) -> JSON event, key = srvyDrawupNo, no other header.
     */
    public void prepare(Exchange exchange) throws JsonProcessingException {
        Object body = exchange.getMessage().getBody();
        InboxEvent event;
        if (body instanceof Acceptance acceptance) {
            event = acceptance.event();
        } else if (body instanceof java.util.Map<?, ?> row) {
            event = new InboxEvent(String.valueOf(row.get("inboxId")), (String) row.get("srvyDrawupNo"),
                    (String) row.get("msgType"));
        } else {
            event = (InboxEvent) body;
        }
        exchange.getMessage().getHeaders().clear();
        exchange.setProperty("inboxId", event.inboxId());
        exchange.getMessage().setHeader(KafkaConstants.KEY, event.srvyDrawupNo());
        exchange.getMessage().setBody(objectMapper.writeValueAsString(event));
    }

    /**
     * The inbox id an event names ({@code routes/inbox-process.camel.yaml}, the key of the claim), or null
     * when the event cannot be read.
     */
    public String inboxIdOf(String eventJson) {
        try {
            com.fasterxml.jackson.databind.JsonNode event = eventJson == null ? null : objectMapper.readTree(eventJson);
            String id = event == null ? null : event.path("inboxId").asText(null);
            return id == null ? null : Long.toString(Long.parseLong(id));
        } catch (JsonProcessingException | NumberFormatException e) {
            return null;
        }
    }

    /** Publishes synchronously; false when the broker did not take it (the row stays for the redelivery job). */
    public boolean publish(InboxEvent event) {
        Exchange result = producer.send(ENDPOINT, exchange -> exchange.getMessage().setBody(event));
        return result.getException() == null && result.getProperty(PUBLISHED, false, Boolean.class);
    }
}
