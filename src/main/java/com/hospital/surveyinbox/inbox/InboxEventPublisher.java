package com.hospital.surveyinbox.inbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.stereotype.Component;

/**
 * Turns an inbox row into its Kafka event ({@link #event}, {@link #json}: steps of
 * {@code routes/inbox-publish.camel.yaml}, which drops every inbound header before the send, so nothing from
 * the HTTP request (Authorization!) can leak into Kafka record headers), reads an event back
 * ({@link #inboxIdOf}).
 */
@Component("inboxEventPublisher")
public class InboxEventPublisher {

    private final ObjectMapper objectMapper;

    public InboxEventPublisher(ObjectMapper objectMapper) {
        this.objectMapper = objectMapper;
    }

    /**
     * The event of {@code body}: an {@link Acceptance}, an {@link InboxEvent} or a row read by camel-sql (a map
     * with inboxId, srvyDrawupNo, msgType and traceParent).
     */
    public InboxEvent event(Object body) {
        if (body instanceof Acceptance acceptance) {
            return acceptance.event();
        }
        if (body instanceof java.util.Map<?, ?> row) {
            return new InboxEvent(String.valueOf(row.get("inboxId")), (String) row.get("srvyDrawupNo"),
                    (String) row.get("msgType"), (String) row.get("traceParent"));
        }
        return (InboxEvent) body;
    }

    /** The event as the record's JSON value. */
    public String json(InboxEvent event) throws JsonProcessingException {
        return objectMapper.writeValueAsString(event);
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
}
